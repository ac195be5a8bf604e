/// What a trust store holds for one (user, device).
public struct TrustRecord: Equatable, Hashable, Sendable {
    /// The longest identity key the trust store records (keys are opaque bytes; this protocol's
    /// are 32 bytes).
    public static let maximumIdentityKeyByteCount = 1024

    /// The latest identity key seen for the contact.
    public let identityKey: [UInt8]
    /// The contact's trust status.
    public let status: TrustStatus
    /// The key recorded before the latest change, while that change awaits acceptance
    /// (present exactly when `status` is `.unverified`).
    public let previousIdentityKey: [UInt8]?

    /// Creates a record.
    public init(identityKey: [UInt8], status: TrustStatus, previousIdentityKey: [UInt8]?) {
        self.identityKey = identityKey
        self.status = status
        self.previousIdentityKey = previousIdentityKey
    }

    /// Whether the key changed and the app has not accepted the new key: sending is refused.
    public var isAwaitingAcceptance: Bool { status == .unverified }

    /// Whether encrypting to `key` is allowed: it is the key on record and no change awaits
    /// acceptance.
    public func allowsSending(to key: [UInt8]) -> Bool {
        !isAwaitingAcceptance && key == identityKey
    }

    /// Whether `key` is an acceptable identity key for the store: 1 to 1024 bytes.
    static func isAcceptable(_ key: [UInt8]) -> Bool {
        (1 ... maximumIdentityKeyByteCount).contains(key.count)
    }
}
