import SignalPrimitives

/// Our own sender-key chain for one group (SPEC §5): the group, our address (the sender every
/// message is bound to), chain id, iteration, chain key and the Ed25519 key that signs every
/// message.
///
/// A value type: `encrypt` computes the message and commits the advanced chain only when
/// it succeeds. Hand `distributionMessage()` to every member (inside pairwise sessions)
/// before sending; start a new chain (a new value) when a member leaves.
public struct SenderKeySendingChain: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The store generation of this chain: how many times a store replaced it. Stores maintain
    /// it (it is not part of `serialized()`): a chain loaded from a store carries the stored
    /// generation, and `ProtocolStore.commit` writes it back only when the stored generation is
    /// still this one (compare-and-swap), storing it with generation + 1; otherwise the write is
    /// `SessionError.staleState`, so a stale copy can never be written back. A new chain has
    /// generation 0, which matches only when none is stored.
    public var generation: UInt64 = 0

    /// The version of the persisted layout written by `serialized()`: 3 adds the creation time
    /// (version 2, without it, still loads; version 1, SPEC version 1's chains without a group
    /// or a sender, is `unsupportedVersion`).
    @_spi(Testing) public static let stateVersion: UInt8 = 3
    /// The oldest persisted layout `init(serialized:)` loads.
    static let oldestLoadedStateVersion: UInt8 = 2

    /// The group the chain belongs to.
    @_spi(Testing) public let group: GroupID
    /// Our address: every message is bound to it as the sender.
    @_spi(Testing) public let sender: ProtocolAddress
    /// The chain's id: SHA-256 of its chain key at iteration 0.
    @_spi(Testing) public let chainID: SenderChainID
    private var chainKey: SenderChainKey
    private let signingKey: Ed25519.PrivateKey
    /// When the chain was created (the manager's clock), for `SenderKeyPolicy`'s age limit;
    /// `nil` for a chain created without a time or stored before times were kept (version 2).
    @_spi(Testing) public let createdAt: Timestamp?

    /// The iteration the next message will use, 0 … 2^32; 2^32 once the chain is exhausted.
    @_spi(Testing) public var iteration: UInt64 { chainKey.iteration }

    /// Whether every iteration has been used: `encrypt` and `distributionMessage` throw `chainExhausted`.
    @_spi(Testing) public var isExhausted: Bool { chainKey.iteration >= SenderChainKey.endOfChain }

    /// The public half of the chain's signing key.
    @_spi(Testing) public var signingPublicKey: Ed25519.PublicKey { signingKey.publicKey }

    /// Creates a new chain for `group`, sent from `sender` (our address), created at
    /// `createdAt`: a random chain key, then a random signing seed, both drawn from `random`
    /// (the system CSPRNG by default; pass another source only for tests).
    /// - Throws: `SessionError.primitive` when libsodium cannot be initialised.
    @_spi(Testing) public init(
        group: GroupID, sender: ProtocolAddress, createdAt: Timestamp? = nil, using random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) {
        let initialKey = SecureBytes(count: SenderChainKey.byteCount) { random.fill($0) }
        let seed = SecureBytes(count: Ed25519.keyByteCount) { random.fill($0) }
        let signing: Ed25519.PrivateKey
        do { signing = try Ed25519.PrivateKey(seedStorage: seed) } catch { throw .primitive(error) }
        self.init(group: group, sender: sender, initialChainKey: initialKey, signingKey: signing, iteration: 0, createdAt: createdAt)
    }

    /// Recreates a chain from its chain key at iteration 0 and its signing key, moved forward
    /// to `iteration` (the iterations before it are never used). For deterministic tests and
    /// test vectors; a real chain comes from `init(group:sender:using:)`. Moving forward costs
    /// one HMAC per iteration, so a large `iteration` takes time proportional to it.
    /// - Throws: `SessionError.invalidKey` unless `initialChainKey` is 32 bytes.
    @_spi(Testing) public init(
        group: GroupID, sender: ProtocolAddress, initialChainKey: [UInt8], signingKey: Ed25519.PrivateKey, iteration: UInt32 = 0
    ) throws(SessionError) {
        guard initialChainKey.count == SenderChainKey.byteCount else { throw .invalidKey }
        self.init(group: group, sender: sender, initialChainKey: SecureBytes(copying: initialChainKey), signingKey: signingKey,
                  iteration: iteration, createdAt: nil)
    }

    private init(
        group: GroupID, sender: ProtocolAddress, initialChainKey: SecureBytes, signingKey: Ed25519.PrivateKey, iteration: UInt32,
        createdAt: Timestamp?
    ) {
        self.createdAt = createdAt
        self.group = group
        self.sender = sender
        chainID = SenderChainID(initialChainKey: initialChainKey)
        chainKey = SenderChainKey(iteration: 0, key: initialChainKey).advanced(to: UInt64(iteration))
        self.signingKey = signingKey
    }

    /// The distribution message for the chain at its current iteration: a receiver can read
    /// this and every later message, none before.
    /// - Throws: `SessionError.chainExhausted` once every iteration has been used.
    @_spi(Testing) public func distributionMessage() throws(SessionError) -> SenderKeyDistributionMessage {
        guard !isExhausted else { throw .chainExhausted }
        return SenderKeyDistributionMessage(group: group, chainID: chainID, iteration: UInt32(chainKey.iteration),
                                            chainKey: chainKey.key, signingPublicKey: signingKey.publicKey)
    }

    /// Encrypts and signs `plaintext` at the current iteration, then advances the chain.
    /// Returns the wire message (SPEC §5). On error the chain is unchanged.
    /// - Throws: `SessionError.chainExhausted` after iteration 2^32 − 1 has been used,
    ///   `SessionError.invalidMessage` for a plaintext too long to pad, and
    ///   `SessionError.primitive` when AES-GCM is unavailable.
    @_spi(Testing) public mutating func encrypt(_ plaintext: [UInt8]) throws(SessionError) -> [UInt8] {
        guard !isExhausted else { throw .chainExhausted }
        let paddedCount = try MessagePadding.checkedPaddedLength(forPlaintextCount: plaintext.count)
        let (messageKey, next) = chainKey.step()
        let keys = SenderMessageKeys(messageKey: messageKey)

        let ciphertextStart = SenderKeyMessage.ciphertextStart
        let signatureStart = ciphertextStart + paddedCount + AES256GCM.tagByteCount
        let context = SenderKeyMessage.context(group: group, sender: sender)
        // Encode(group) || Encode(sender) || message: the signature covers the context and
        // every byte of the message before the signature, which is written last.
        var signed = [UInt8]()
        signed.reserveCapacity(context.count + signatureStart)
        signed.append(contentsOf: context)
        signed.append(WireType.senderKeyMessage)
        signed.append(contentsOf: chainID.rawRepresentation)
        signed.appendBigEndian(UInt32(chainKey.iteration))
        signed.append(contentsOf: repeatElement(0, count: signatureStart - SenderKeyMessage.headerByteCount))

        let signing = signingKey
        var signature = [UInt8](repeating: 0, count: Ed25519.signatureByteCount)
        try plaintext.withBytes { (input: UnsafeRawBufferPointer) throws(SessionError) in
            try signed.withMutableBytes { (all: UnsafeMutableRawBufferPointer) throws(SessionError) in
                let out = all.slice(context.count ..< all.count)
                keys.writeCommitment(into: out.slice(SenderKeyMessage.commitmentRange))
                let aad = SenderKeyMessage.associatedData(context: context, head: UnsafeRawBufferPointer(out.slice(0 ..< ciphertextStart)))
                try aad.withBytes { (aad: UnsafeRawBufferPointer) throws(SessionError) in
                    try keys.seal(input, aad: aad, into: out.slice(ciphertextStart ..< signatureStart))
                }
                try signature.withMutableBytes { (sig: UnsafeMutableRawBufferPointer) throws(SessionError) in
                    do throws(CryptoError) { try signing.signature(for: UnsafeRawBufferPointer(all), into: sig) } catch {
                        throw .primitive(error)
                    }
                }
            }
        }
        chainKey = next
        return Array(signed[context.count...]) + signature
    }

    // MARK: Persistence

    /// The chain as a persisted state (kind `senderKeySender`, version 3). Body layout:
    ///
    ///     Encode(group) || Encode(sender) || chain_id (32) || u64(iteration, 0 … 2^32)
    ///     || chain_key (32) || signing_seed (32)
    ///     || u8(has_created_at, 0 or 1) || [i64(created_at, seconds since 1970)]
    ///
    /// (Version 2 ends after the signing seed.)
    /// The blob holds secrets: store it protected and wipe copies (`SecureMemory.zero`).
    public func serialized() -> [UInt8] {
        var writer = StateWriter(kind: .senderKeySender, version: Self.stateVersion)
        writer.writeFixed(group.encoded)
        writer.writeFixed(sender.encoded)
        writer.writeFixed(chainID.rawRepresentation)
        writer.write(chainKey.iteration)
        writer.writeFixed(chainKey.key)
        signingKey.withUnsafeSeedBytes { seed in writer.writeFixed(SecureBytes(copying: seed)) }
        if let createdAt {
            writer.write(UInt8(1))
            writer.write(UInt64(bitPattern: createdAt.secondsSince1970))
        } else {
            writer.write(UInt8(0))
        }
        return writer.finish()
    }

    /// Loads a chain written by `serialized()`, strictly.
    /// - Throws: `SessionError.invalidPayload` for a bad envelope, a bad group or address, a
    ///   truncated or extra field or an iteration above 2^32; `SessionError.unsupportedVersion`
    ///   for an unknown version.
    public init(serialized blob: [UInt8]) throws(SessionError) {
        var reader = try StateReader(blob, kind: .senderKeySender, supportedVersions: Self.oldestLoadedStateVersion ... Self.stateVersion)
        let group = try reader.readGroupID()
        let sender = try reader.readAddress()
        let id = try reader.readFixed(SenderChainID.byteCount)
        let iteration = try reader.readUInt64()
        guard iteration <= SenderChainKey.endOfChain else { throw .invalidPayload }
        let key = try reader.readSecret(SenderChainKey.byteCount)
        let seed = try reader.readSecret(Ed25519.keyByteCount)
        var createdAt: Timestamp?
        if reader.version >= 3 {
            switch try reader.readByte() {
            case 0: break
            case 1: createdAt = Timestamp(secondsSince1970: Int64(bitPattern: try reader.readUInt64()))
            default: throw .invalidPayload
            }
        }
        try reader.finish()
        self.createdAt = createdAt
        do { signingKey = try Ed25519.PrivateKey(seedStorage: seed) } catch { throw .invalidPayload }
        self.group = group
        self.sender = sender
        chainID = SenderChainID(unchecked: id)
        chainKey = SenderChainKey(iteration: iteration, key: key)
    }

    /// A redacted description: group, sender, chain id and iteration only.
    public var description: String {
        "SenderKeySendingChain(\(group), sender: \(sender), chain: \(Hex.encode(chainID.rawRepresentation)), "
            + "iteration: \(iteration), createdAt: \(createdAt.map { String($0.secondsSince1970) } ?? "unknown"), secrets redacted)"
    }
    /// A redacted description.
    public var debugDescription: String { description }
}
