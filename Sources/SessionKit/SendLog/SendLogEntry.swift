/// A message this device sent, as its `SessionManager`'s send log keeps it: the plaintext, the
/// chain and position it was sent at, and when it expires.
///
/// The plaintext is the message's content: the description never shows it. An app that
/// re-sends it after a retry notice encrypts it again (`SessionManager.encrypt(_:to:)`), in the
/// new session, and should then drop its copy.
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

    /// An entry.
    public init(id: UInt64, chain: SendLogChain, position: UInt32, expiresAt: Timestamp, plaintext: [UInt8]) {
        self.id = id
        self.chain = chain
        self.position = position
        self.expiresAt = expiresAt
        self.plaintext = plaintext
    }

    /// The chain, position and size (never the plaintext).
    public var description: String {
        "SendLogEntry(\(id), \(chain) at \(position), \(plaintext.count) bytes, expires \(expiresAt))"
    }
}
