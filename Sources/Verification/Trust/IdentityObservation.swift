/// What the trust store concluded when it saw an identity key for a contact.
public enum IdentityObservation: Equatable, Hashable, Sendable {
    /// No key was known: this one is now recorded and trusted on first use.
    case firstUse
    /// The key is the one on record (sending is allowed unless an earlier change still
    /// awaits acceptance).
    case unchanged
    /// The key differs from the one on record, which was `previous`. The contact is now
    /// `unverified` and sending is refused until the app accepts the new key.
    case changed(previous: [UInt8])
}
