import SignalPrimitives

/// A group message encrypted with a sender key (SPEC §5):
///
///     0x24 || chain_id (32) || u32(iteration) || commit (32) || ct || sig (64)
///
/// `ct` is AES-256-GCM of the padded plaintext with
/// `aad = 0x24 || Encode(group) || Encode(sender) || chain_id || u32(iteration) || commit`, and
/// `sig` is the chain's Ed25519 signature of `Encode(group) || Encode(sender)` followed by
/// every byte before it. The group and the sender are not on the wire: the receiver takes them
/// from the context the message arrived in. This type is the wire format only; the keys live
/// in the chains.
@_spi(Testing) public struct SenderKeyMessage: Sendable, Equatable {
    /// Bytes of the header: type, chain id, iteration.
    public static let headerByteCount = 1 + SenderChainID.byteCount + 4
    /// Bytes of the header and the commitment: where the ciphertext starts.
    public static let ciphertextStart = headerByteCount + SenderMessageKeys.commitmentByteCount
    /// The shortest valid message: header, commitment, a bare AEAD tag, signature
    /// (1 + 32 + 4 + 32 + 16 + 64 = 149 bytes).
    public static let minimumByteCount = ciphertextStart + AES256GCM.tagByteCount + Ed25519.signatureByteCount

    /// The whole message as received or sent.
    public let serialized: [UInt8]

    /// Checks the type byte and length of a received message (SPEC §5's first two checks).
    /// - Throws: `SessionError.invalidMessage` for an empty input or fewer than 149 bytes,
    ///   `SessionError.unsupportedVersion` for a type byte other than 0x24.
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

    /// The range of the commitment.
    static var commitmentRange: Range<Int> { headerByteCount ..< ciphertextStart }

    /// The range of the ciphertext (including its tag).
    var ciphertextRange: Range<Int> { Self.ciphertextStart ..< signatureStart }

    /// Where the signature starts: every byte before it is signed.
    var signatureStart: Int { serialized.count - Ed25519.signatureByteCount }

    /// `Encode(group) || Encode(sender)`: what the AAD and the signature bind besides the bytes
    /// on the wire.
    static func context(group: GroupID, sender: ProtocolAddress) -> [UInt8] { group.encoded + sender.encoded }

    /// `0x24 || Encode(group) || Encode(sender) || chain_id || u32(iteration) || commit` for the
    /// message whose first 69 bytes are `head`.
    static func associatedData(context: [UInt8], head: UnsafeRawBufferPointer) -> [UInt8] {
        var aad = [UInt8]()
        aad.reserveCapacity(context.count + ciphertextStart)
        aad.append(WireType.senderKeyMessage)
        aad.append(contentsOf: context)
        aad.append(contentsOf: head.slice(1 ..< ciphertextStart))
        return aad
    }
}
