import SignalPrimitives

/// The 32-byte identifier of a sender-key chain: SHA-256 of the chain key at iteration 0
/// (SPEC §5). It is public: it travels in every distribution and sender-key message.
@_spi(Storage) @_spi(Testing) public struct SenderChainID: Hashable, Sendable, CustomStringConvertible {
    /// The length of a chain id in bytes.
    public static let byteCount = 32

    /// The 32 bytes.
    public let rawRepresentation: [UInt8]

    /// Wraps 32 bytes.
    /// - Throws: `SessionError.invalidMessage` unless exactly 32 bytes are given.
    public init(rawRepresentation: [UInt8]) throws(SessionError) {
        guard rawRepresentation.count == Self.byteCount else { throw .invalidMessage }
        self.rawRepresentation = rawRepresentation
    }

    /// Wraps bytes the caller has already checked to be 32 long.
    init(unchecked bytes: [UInt8]) { rawRepresentation = bytes }

    /// The chain id of a chain whose key at iteration 0 is `initialChainKey`.
    init(initialChainKey: SecureBytes) {
        rawRepresentation = initialChainKey.withUnsafeBytes { SHA256.hash(bytes: $0) }
    }

    /// Lowercase hex of the id.
    public var description: String { "SenderChainID(\(Hex.encode(rawRepresentation)))" }
}
