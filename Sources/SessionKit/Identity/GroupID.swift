import SignalPrimitives

/// The identifier of a group (for example a group's UUID bytes or UTF-8 text chosen by the
/// app): sender-key chains belong to one group, which every distribution and every sender-key
/// message binds (SPEC §5).
public struct GroupID: Hashable, Sendable, CustomStringConvertible {
    /// The longest group id, in bytes.
    public static let maximumByteCount = 255

    /// The identifier's bytes, compared exactly.
    public let rawRepresentation: [UInt8]

    /// A group id from its bytes.
    /// - Throws: `SessionError.invalidGroupID` for an empty id or one longer than 255 bytes.
    public init(rawRepresentation: [UInt8]) throws(SessionError) {
        guard (1 ... Self.maximumByteCount).contains(rawRepresentation.count) else { throw .invalidGroupID }
        self.rawRepresentation = rawRepresentation
    }

    /// A group id from the UTF-8 bytes of `string`.
    /// - Throws: `SessionError.invalidGroupID` for an empty string or one longer than 255 bytes.
    public init(_ string: String) throws(SessionError) {
        try self.init(rawRepresentation: Array(string.utf8))
    }

    /// Equality of the bytes.
    public static func == (a: GroupID, b: GroupID) -> Bool { a.rawRepresentation == b.rawRepresentation }

    /// Hashes the bytes (as raw bytes: one call, not one per byte).
    public func hash(into hasher: inout Hasher) { rawRepresentation.withUnsafeBytes { hasher.combine(bytes: $0) } }

    /// `Encode(group) = u8(len(gid)) || gid` (SPEC §1).
    @_spi(Storage) @_spi(Testing) public var encoded: [UInt8] { [UInt8(rawRepresentation.count)] + rawRepresentation }

    /// The bytes in hex.
    public var description: String {
        "GroupID(\(Hex.encode(rawRepresentation)))"
    }
}
