import SignalPrimitives

/// The message that hands a sender-key chain to a group member (SPEC §5), 101 bytes:
///
///     0x10 || chain_id (32) || u32(iteration) || chain_key (32) || signing_pk (32)
///
/// It carries the chain key, so it is a secret: send it only inside a pairwise session,
/// and wipe `serialized` copies when done.
public struct SenderKeyDistributionMessage: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The encoded length.
    public static let byteCount = 1 + SenderChainID.byteCount + 4 + SenderChainKey.byteCount + Ed25519.keyByteCount

    /// The chain this message hands over.
    public let chainID: SenderChainID
    /// The iteration of `chainKey`: the first message the receiver can read.
    public let iteration: UInt32
    /// The chain key at `iteration`.
    let chainKey: SecureBytes
    /// The key that signs every message of the chain.
    public let signingPublicKey: Ed25519.PublicKey

    /// Builds the message of a chain at `chainKey`'s iteration.
    init(chainID: SenderChainID, iteration: UInt32, chainKey: SecureBytes, signingPublicKey: Ed25519.PublicKey) {
        self.chainID = chainID
        self.iteration = iteration
        self.chainKey = chainKey
        self.signingPublicKey = signingPublicKey
    }

    /// Parses and checks a received distribution message, in SPEC §5's order.
    /// - Throws: `SessionError.invalidMessage` for an empty input or a length other than 101,
    ///   `SessionError.unsupportedVersion` for a type byte other than 0x10, and
    ///   `SessionError.invalidKey` when the signing key is not a valid Ed25519 point (SPEC §1).
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        guard let type = bytes.first else { throw .invalidMessage }
        guard type == WireType.senderKeyDistribution else { throw .unsupportedVersion }
        guard bytes.count == Self.byteCount else { throw .invalidMessage }
        var offset = 1
        func take(_ count: Int) -> [UInt8] {
            defer { offset += count }
            return Array(bytes[offset ..< offset + count])
        }
        let id = take(SenderChainID.byteCount)
        let iteration = bytes.readBigEndianUInt32(at: offset)
        offset += 4
        let key = bytes[offset ..< offset + SenderChainKey.byteCount].withUnsafeBytes { SecureBytes(copying: $0) }
        offset += SenderChainKey.byteCount
        let signing: Ed25519.PublicKey
        do {
            signing = try Ed25519.PublicKey(rawRepresentation: take(Ed25519.keyByteCount))
        } catch {
            throw .invalidMessage
        }
        guard signing.isValidPoint else { throw .invalidKey }
        self.init(chainID: SenderChainID(unchecked: id), iteration: iteration, chainKey: key, signingPublicKey: signing)
    }

    /// The 101-byte encoding. It contains the chain key: wipe it (`SecureMemory.zero`) once sent.
    public var serialized: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.byteCount)
        out.append(WireType.senderKeyDistribution)
        out.append(contentsOf: chainID.rawRepresentation)
        out.appendBigEndian(iteration)
        chainKey.withUnsafeBytes { out.append(contentsOf: $0) }
        out.append(contentsOf: signingPublicKey.rawRepresentation)
        return out
    }

    /// A redacted description: chain id and iteration, never the chain key.
    public var description: String {
        "SenderKeyDistributionMessage(chain: \(Hex.encode(chainID.rawRepresentation)), iteration: \(iteration), chain key redacted)"
    }
    /// A redacted description.
    public var debugDescription: String { description }
}
