import SignalPrimitives

/// What a trust store holds for one (user, device).
public struct TrustRecord: Equatable, Hashable, Sendable {
    /// The latest identity key seen for the contact.
    public let identityKey: Ed25519.PublicKey
    /// The contact's trust status.
    public let status: TrustStatus
    /// The key recorded before the latest change, while that change awaits acceptance
    /// (present exactly when `status` is `.unverified`).
    public let previousIdentityKey: Ed25519.PublicKey?

    /// Creates a record.
    public init(identityKey: Ed25519.PublicKey, status: TrustStatus, previousIdentityKey: Ed25519.PublicKey?) {
        self.identityKey = identityKey
        self.status = status
        self.previousIdentityKey = previousIdentityKey
    }

    /// Whether the key changed and the app has not accepted the new key: sending is refused.
    public var isAwaitingAcceptance: Bool { status == .unverified }

    /// Whether encrypting to `key` is allowed: it is the key on record and no change awaits
    /// acceptance.
    public func allowsSending(to key: Ed25519.PublicKey) -> Bool {
        !isAwaitingAcceptance && key == identityKey
    }
}
