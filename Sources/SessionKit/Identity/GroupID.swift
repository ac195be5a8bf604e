import SignalPrimitives

/// The identifier of a group (for example a group's UUID bytes): sender-key chains are kept
/// per (group, sender device).
public struct GroupID: Hashable, Sendable, CustomStringConvertible {
    /// The identifier's bytes, compared exactly.
    public let rawRepresentation: [UInt8]

    /// A group id from its bytes.
    public init(rawRepresentation: [UInt8]) {
        self.rawRepresentation = rawRepresentation
    }

    /// A group id from the UTF-8 bytes of `string`.
    public init(_ string: String) {
        rawRepresentation = Array(string.utf8)
    }

    /// The bytes in hex.
    public var description: String {
        "GroupID(\(Hex.encode(rawRepresentation)))"
    }
}
