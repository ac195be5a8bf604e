import SignalPrimitives

/// A group message encrypted with a sender key (SPEC §5):
///
///     0x11 || chain_id (32) || u32(iteration) || ct || sig (64)
///
/// `ct` is AES-256-GCM of the padded plaintext with `aad = 0x11 || chain_id || u32(iteration)`
/// (the 37-byte header), and `sig` is the chain's Ed25519 signature of every byte before it.
/// This type is the wire format only; the keys live in the chains.
public struct SenderKeyMessage: Sendable, Equatable {
    /// Bytes of the header: type, chain id, iteration.
    public static let headerByteCount = 1 + SenderChainID.byteCount + 4
    /// The shortest valid message: header, a bare AEAD tag, signature (1 + 32 + 4 + 16 + 64).
    public static let minimumByteCount = headerByteCount + AES256GCM.tagByteCount + Ed25519.signatureByteCount

    /// The whole message as received or sent.
    public let serialized: [UInt8]

    /// Checks the type byte and length of a received message (SPEC §5's first two checks).
    /// - Throws: `SessionError.invalidMessage` for an empty input or fewer than 117 bytes,
    ///   `SessionError.unsupportedVersion` for a type byte other than 0x11.
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        guard let type = bytes.first else { throw .invalidMessage }
        guard type == WireType.senderKeyMessage else { throw .unsupportedVersion }
        guard bytes.count >= Self.minimumByteCount else { throw .invalidMessage }
        serialized = bytes
    }

    /// Wraps a message this library has just built.
    init(unchecked bytes: [UInt8]) { serialized = bytes }

    /// The chain the message belongs to.
    public var chainID: SenderChainID {
        SenderChainID(unchecked: Array(serialized[1 ..< 1 + SenderChainID.byteCount]))
    }

    /// The iteration of the message key.
    public var iteration: UInt32 { serialized.readBigEndianUInt32(at: 1 + SenderChainID.byteCount) }

    /// The range of the ciphertext (including its tag).
    var ciphertextRange: Range<Int> { Self.headerByteCount ..< signatureStart }

    /// Where the signature starts: every byte before it is signed.
    var signatureStart: Int { serialized.count - Ed25519.signatureByteCount }
}
