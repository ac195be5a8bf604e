import SignalPrimitives

/// A message `SessionManager.decrypt` decrypted: the plaintext, who sent it, and what the trust
/// store observed about the sender's identity key, so that an app can show a key change next
/// to the message it arrived with.
public struct DecryptedMessage: Sendable, CustomStringConvertible {
    /// The plaintext.
    public let plaintext: [UInt8]
    /// The device the message came from, as the transport said (`from:`). SPEC v2 binds both
    /// addresses into every session, so a message re-attributed to another address does not
    /// decrypt: a returned message did come from this address's session.
    public let sender: ProtocolAddress
    /// The sender's identity key in the session that decrypted the message.
    public let senderIdentityKey: Ed25519.PublicKey
    /// What the trust evaluator observed for `senderIdentityKey`: first use, unchanged, a new
    /// device, changed (sending to the sender is then refused until the app accepts either key
    /// or rejects the change), or another key on a device the contact's record does not list
    /// (`unknownDeviceWithOtherKey`: quarantined, nothing else changed).
    public let identityObservation: IdentityObservation
    /// Whether X3DH ran: the message was a prekey message that started a new session.
    public let establishedSession: Bool
    /// Whether the message is quarantined: it came under an identity key other than the
    /// contact's on record, and recording it is not trust on first use: the contact is
    /// verified (`identityObservation` is `.changed`), the device id is not one the record
    /// lists (`.unknownDeviceWithOtherKey`), the key is the one a pending change would replace,
    /// or the message came on an older session under another key. Show it apart, marked as
    /// from an unconfirmed key (or not at all), never as the contact's message. Nothing was
    /// recorded: the contact's record and status stay, its session stays the one messages are
    /// sent to, and the key is trusted only when the app accepts it
    /// (`SessionManager.acceptIdentityChange(_:forUser:)` with `senderIdentityKey`, or
    /// `TrustStore.markVerified` once the user compared its safety number).
    public let isQuarantined: Bool

    /// Creates a decrypted message.
    init(
        plaintext: [UInt8], sender: ProtocolAddress, senderIdentityKey: Ed25519.PublicKey,
        identityObservation: IdentityObservation, establishedSession: Bool, isQuarantined: Bool = false
    ) {
        self.plaintext = plaintext
        self.sender = sender
        self.senderIdentityKey = senderIdentityKey
        self.identityObservation = identityObservation
        self.establishedSession = establishedSession
        self.isQuarantined = isQuarantined
    }

    /// The sender, the size and the observation, never the plaintext.
    public var description: String {
        "DecryptedMessage(from: \(sender), \(plaintext.count) bytes, identity: \(identityObservation), new session: \(establishedSession)\(isQuarantined ? ", quarantined" : ""))"
    }
}
