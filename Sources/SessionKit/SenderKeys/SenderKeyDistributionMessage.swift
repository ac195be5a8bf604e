import SignalPrimitives

/// The message that hands a sender-key chain of one group to a member (SPEC §5):
///
///     0x23 || Encode(group) || chain_id (32) || u32(iteration) || chain_key (32) || signing_pk (32)
///
/// 102 + len(gid) bytes. It carries the chain key, so it is a secret: send it only inside a
/// pairwise session, and wipe `serialized` copies when done. Decoding checks the layout only;
/// the group and the signing key are checked when it is processed for a group
/// (`SenderKeyReceiverState.process(_:for:)`).
public struct SenderKeyDistributionMessage: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Bytes besides the group id.
    @_spi(Testing) public static let fixedByteCount = 1 + 1 + SenderChainID.byteCount + 4 + SenderChainKey.byteCount + Ed25519.keyByteCount

    /// The group the chain belongs to.
    public let group: GroupID
    /// The chain this message hands over.
    @_spi(Testing) public let chainID: SenderChainID
    /// The iteration of `chainKey`: the first message the receiver can read.
    public let iteration: UInt32
    /// The chain key at `iteration`.
    let chainKey: SecureBytes
    /// The key that signs every message of the chain (not yet checked to be a valid point).
    @_spi(Testing) public let signingPublicKey: Ed25519.PublicKey

    /// Builds the message of a chain at `chainKey`'s iteration.
    init(group: GroupID, chainID: SenderChainID, iteration: UInt32, chainKey: SecureBytes, signingPublicKey: Ed25519.PublicKey) {
        self.group = group
        self.chainID = chainID
        self.iteration = iteration
        self.chainKey = chainKey
        self.signingPublicKey = signingPublicKey
    }

    /// Parses a received distribution message: its type byte and length (SPEC §5's first two
    /// checks).
    /// - Throws: `SessionError.invalidMessage` for an empty input, an empty group id or a
    ///   length other than 102 + len(gid); `SessionError.unsupportedVersion` for a type byte
    ///   other than 0x23.
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        guard let type = bytes.first else { throw .invalidMessage }
        guard type == WireType.senderKeyDistribution else { throw .unsupportedVersion }
        guard bytes.count >= 2 else { throw .invalidMessage }
        let groupCount = Int(bytes[1])
        guard groupCount > 0, bytes.count == Self.fixedByteCount + groupCount else { throw .invalidMessage }
        var offset = 2 + groupCount
        let group: GroupID
        do { group = try GroupID(rawRepresentation: Array(bytes[2 ..< offset])) } catch { throw .invalidMessage }
        let id = Array(bytes[offset ..< offset + SenderChainID.byteCount])
        offset += SenderChainID.byteCount
        let iteration = bytes.readBigEndianUInt32(at: offset)
        offset += 4
        let key = bytes[offset ..< offset + SenderChainKey.byteCount].withUnsafeBytes { SecureBytes(copying: $0) }
        offset += SenderChainKey.byteCount
        let signing: Ed25519.PublicKey
        do { signing = try Ed25519.PublicKey(rawRepresentation: Array(bytes[offset ..< offset + Ed25519.keyByteCount])) } catch {
            throw .invalidMessage
        }
        self.init(group: group, chainID: SenderChainID(unchecked: id), iteration: iteration, chainKey: key, signingPublicKey: signing)
    }

    /// The encoding. It contains the chain key: wipe it (`SecureMemory.zero`) once sent.
    public var serialized: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.fixedByteCount + group.rawRepresentation.count)
        out.append(WireType.senderKeyDistribution)
        out.append(contentsOf: group.encoded)
        out.append(contentsOf: chainID.rawRepresentation)
        out.appendBigEndian(iteration)
        chainKey.withUnsafeBytes { out.append(contentsOf: $0) }
        out.append(contentsOf: signingPublicKey.rawRepresentation)
        return out
    }

    /// A redacted description: group, chain id and iteration, never the chain key.
    public var description: String {
        "SenderKeyDistributionMessage(\(group), chain: \(Hex.encode(chainID.rawRepresentation)), iteration: \(iteration), chain key redacted)"
    }
    /// A redacted description.
    public var debugDescription: String { description }
}
