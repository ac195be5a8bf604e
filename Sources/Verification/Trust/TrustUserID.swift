import SessionKit

/// A user id as a trust store keys its records: the UTF-8 bytes of the id, 1–255 of them,
/// compared as bytes (never as Swift `String`s, which equate "é" and "e\u{301}"), like
/// `ProtocolAddress` compares its user id.
public struct TrustUserID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The user id.
    public let userID: String
    /// Its UTF-8 bytes.
    public let utf8: [UInt8]

    /// The id of `userID`.
    /// - Throws: `VerificationError.invalidPayload` when the id is empty or longer than 255
    ///   UTF-8 bytes.
    public init(_ userID: String) throws(VerificationError) {
        let bytes = Array(userID.utf8)
        guard (1 ... ProtocolAddress.maximumUserIDByteCount).contains(bytes.count) else { throw .invalidPayload }
        self.userID = userID
        utf8 = bytes
    }

    /// The user of `address`.
    public init(_ address: ProtocolAddress) {
        userID = address.userID
        utf8 = Array(address.userID.utf8)
    }

    /// Equality of the UTF-8 bytes.
    public static func == (a: TrustUserID, b: TrustUserID) -> Bool { a.utf8 == b.utf8 }

    /// Hashes the UTF-8 bytes (as raw bytes: one call, not one per byte).
    public func hash(into hasher: inout Hasher) { utf8.withUnsafeBytes { hasher.combine(bytes: $0) } }

    /// The order of the bytes (the persisted order of `TrustSnapshot`).
    public static func < (a: TrustUserID, b: TrustUserID) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// The user id.
    public var description: String { userID }
}
