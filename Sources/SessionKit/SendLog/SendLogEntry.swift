import SignalPrimitives

/// A message this device sent, as its `SessionManager`'s send log keeps it: the plaintext, the
/// chain and position it was sent at, the identity key of the device it was sent to, and when
/// it expires.
///
/// The plaintext is the message's content: the description never shows it. An app that
/// re-sends it after a retry notice encrypts it again with
/// `SessionManager.resendLoggedMessages(_:to:)`, which sends it only into a session under the
/// identity key it was first sent under (SPEC §9: a logged message never crosses a change of
/// the peer's key), and should then drop its copy.
public struct SendLogEntry: Sendable, Hashable, CustomStringConvertible {
    /// The store's id, increasing in the order entries were logged (0 in a write: the store
    /// assigns it).
    public let id: UInt64
    /// The chain the message was sent on.
    public let chain: SendLogChain
    /// Its position there: the pairwise counter (header.n) or the group iteration.
    public let position: UInt32
    /// When the entry is dropped.
    public let expiresAt: Timestamp
    /// The plaintext that was encrypted (application content only: distributions, which hold
    /// chain keys, are never logged).
    public let plaintext: [UInt8]
    /// For a pairwise message, the identity key of the session it was sent on (the recipient
    /// device's key then); `nil` for a group message. The message is re-sent only into a
    /// session under this key.
    public let peerIdentityKey: Ed25519.PublicKey?

    /// An entry.
    public init(
        id: UInt64, chain: SendLogChain, position: UInt32, expiresAt: Timestamp, plaintext: [UInt8],
        peerIdentityKey: Ed25519.PublicKey? = nil
    ) {
        self.id = id
        self.chain = chain
        self.position = position
        self.expiresAt = expiresAt
        self.plaintext = plaintext
        self.peerIdentityKey = peerIdentityKey
    }

    /// The same entry with the id a store assigned.
    func withID(_ id: UInt64) -> SendLogEntry {
        SendLogEntry(id: id, chain: chain, position: position, expiresAt: expiresAt, plaintext: plaintext, peerIdentityKey: peerIdentityKey)
    }

    /// The chain, position and size (never the plaintext).
    public var description: String {
        "SendLogEntry(\(id), \(chain) at \(position), \(plaintext.count) bytes, expires \(expiresAt))"
    }
}
