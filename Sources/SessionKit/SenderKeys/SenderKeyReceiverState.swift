import SignalPrimitives

/// Everything a receiver holds for one sender in one group: up to
/// `ProtocolLimits.maxSenderKeyChainsPerSender` (5) chains, the oldest dropped first.
///
/// A value type, transactional by construction: `decrypt` works on a copy of the chain and
/// writes it back only when the message has verified, opened and unpadded, so a failed,
/// forged or replayed message leaves the state (and its serialization) exactly as it was.
public struct SenderKeyReceiverState: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The store generation of this state: how many times a store replaced it. Stores maintain
    /// it (it is not part of `serialized()`): a state loaded from a store carries the stored
    /// generation, and `ProtocolStore.commit` writes it back only when the stored generation is
    /// still this one (compare-and-swap), storing it with generation + 1; otherwise the write is
    /// `SessionError.staleState`, so a stale copy can never be written back. A new state has
    /// generation 0, which matches only when none is stored.
    public var generation: UInt64 = 0

    /// The version of the persisted layout written by `serialized()`.
    @_spi(Testing) public static let stateVersion: UInt8 = 2

    /// The chains, oldest first.
    private(set) var chains: [SenderKeyReceivingChain]

    /// An empty state: no chain yet.
    @_spi(Testing) public init() { chains = [] }

    /// The ids of the chains held, oldest first.
    @_spi(Storage) @_spi(Testing) public var chainIDs: [SenderChainID] { chains.map(\.chainID) }

    /// Whether a chain with `chainID` is held.
    @_spi(Testing) public func holdsChain(_ chainID: SenderChainID) -> Bool { chains.contains { $0.chainID == chainID } }

    /// The next iteration expected on `chainID` (2^32 once the last one was read), or `nil`
    /// when the chain is not held.
    @_spi(Testing) public func iteration(of chainID: SenderChainID) -> UInt64? {
        chains.first { $0.chainID == chainID }?.chainKey.iteration
    }

    /// The number of skipped message keys stored for `chainID`, or `nil` when it is not held.
    @_spi(Testing) public func skippedKeyCount(of chainID: SenderChainID) -> Int? {
        chains.first { $0.chainID == chainID }?.skipped.count
    }

    /// Adds the chain of a distribution message received for `group`, after SPEC §5's checks
    /// that follow parsing: the distribution's group must be `group` (`invalidMessage`), and its
    /// signing key a valid point (`invalidKey`). A chain already held is then ignored (it does
    /// not move the iteration at which this copy started); beyond five chains the one that
    /// arrived first is dropped. On error nothing changes.
    /// - Throws: `SessionError.invalidMessage`, `.invalidKey` as above, `.primitive` when the
    ///   point check cannot run (an unsound libsodium, SPEC §1).
    @_spi(Testing) public mutating func process(_ distribution: SenderKeyDistributionMessage, for group: GroupID) throws(SessionError) {
        guard distribution.group == group else { throw .invalidMessage }
        do { try distribution.signingPublicKey.validatePoint() } catch { throw SessionError(error) }
        guard !holdsChain(distribution.chainID) else { return }
        chains.append(SenderKeyReceivingChain(distribution: distribution))
        let excess = chains.count - ProtocolLimits.maxSenderKeyChainsPerSender
        if excess > 0 { chains.removeFirst(excess) }
    }

    /// Parses a distribution message and adds its chain (see `process(_:for:)`).
    /// - Throws: the errors of `SenderKeyDistributionMessage.init(serialized:)`
    ///   (`unsupportedVersion`, `invalidMessage`), then those of `process(_:for:)`. On error
    ///   nothing changes.
    @_spi(Testing) public mutating func processDistribution(_ bytes: [UInt8], for group: GroupID) throws(SessionError) {
        try process(try SenderKeyDistributionMessage(serialized: bytes), for: group)
    }

    /// Verifies and decrypts a sender-key message received for `group` from `sender` (the
    /// context it arrived in), with SPEC §5's checks in order. On error the state is unchanged.
    /// - Throws: `SessionError.unsupportedVersion` (type byte), `.invalidMessage` (too short,
    ///   a wrong commitment, or the tag does not verify), `.unknownChain`, `.invalidSignature`,
    ///   `.messageKeyUnavailable`, `.duplicateMessage`, `.tooManySkippedMessages`,
    ///   `.invalidPadding`.
    @_spi(Testing) public mutating func decrypt(_ bytes: [UInt8], for group: GroupID, from sender: ProtocolAddress) throws(SessionError) -> [UInt8] {
        let message = try SenderKeyMessage(serialized: bytes)
        let id = message.chainID
        guard let index = chains.firstIndex(where: { $0.chainID == id }) else { throw .unknownChain }
        var chain = chains[index]
        let plaintext = try chain.decrypt(message, group: group, sender: sender)
        chains[index] = chain
        return plaintext
    }

    // MARK: Persistence

    /// The state as a persisted blob (kind `senderKeyReceiver`, version 2; version 1 is
    /// `unsupportedVersion`). Body layout:
    ///
    ///     u32(chain count, ≤ 5), then per chain, oldest first:
    ///       chain_id (32) || u32(start iteration) || u64(iteration, start … 2^32)
    ///       || chain_key (32) || signing_pk (32)
    ///       || u32(skipped count, ≤ 2000) || per skipped key, ascending: u32(iteration) || mk (32)
    ///
    /// The blob holds secrets: store it protected and wipe copies (`SecureMemory.zero`).
    public func serialized() -> [UInt8] {
        var writer = StateWriter(kind: .senderKeyReceiver, version: Self.stateVersion)
        writer.write(UInt32(chains.count))
        for chain in chains {
            writer.writeFixed(chain.chainID.rawRepresentation)
            writer.write(chain.startIteration)
            writer.write(chain.chainKey.iteration)
            writer.writeFixed(chain.chainKey.key)
            writer.writeFixed(chain.signingKey.rawRepresentation)
            writer.write(UInt32(chain.skipped.count))
            for key in chain.skipped {
                writer.write(key.iteration)
                writer.writeFixed(key.messageKey)
            }
        }
        return writer.finish()
    }

    /// Loads a state written by `serialized()`, strictly: nothing half-loaded.
    /// - Throws: `SessionError.invalidPayload` for a bad envelope, truncation or trailing bytes,
    ///   more than 5 chains, a repeated chain id, an iteration above 2^32 or below the start, a
    ///   signing key that is not a valid point, more than 2000 skipped keys, or skipped
    ///   iterations that are not ascending and within [start, iteration); `SessionError.unsupportedVersion` for an
    ///   unknown version.
    public init(serialized blob: [UInt8]) throws(SessionError) {
        var reader = try StateReader(blob, kind: .senderKeyReceiver, supportedVersions: Self.stateVersion ... Self.stateVersion)
        let count = try reader.readUInt32()
        guard count <= UInt32(ProtocolLimits.maxSenderKeyChainsPerSender) else { throw .invalidPayload }
        var loaded = [SenderKeyReceivingChain]()
        for _ in 0 ..< count {
            let id = SenderChainID(unchecked: try reader.readFixed(SenderChainID.byteCount))
            guard !loaded.contains(where: { $0.chainID == id }) else { throw .invalidPayload }
            let start = try reader.readUInt32()
            let iteration = try reader.readUInt64()
            guard iteration <= SenderChainKey.endOfChain, iteration >= UInt64(start) else { throw .invalidPayload }
            let key = try reader.readSecret(SenderChainKey.byteCount)
            let signingBytes = try reader.readFixed(Ed25519.keyByteCount)
            let signing: Ed25519.PublicKey
            do { signing = try Ed25519.PublicKey(rawRepresentation: signingBytes) } catch { throw .invalidPayload }
            guard signing.isValidPoint else { throw .invalidPayload }
            let skippedCount = try reader.readUInt32()
            guard skippedCount <= UInt32(ProtocolLimits.defaultMaxStored) else { throw .invalidPayload }
            var skipped = [SenderKeyReceivingChain.SkippedKey]()
            skipped.reserveCapacity(Int(skippedCount))
            for _ in 0 ..< skippedCount {
                let skippedIteration = try reader.readUInt32()
                guard UInt64(skippedIteration) < iteration, skippedIteration >= start,
                      skipped.last.map({ $0.iteration < skippedIteration }) ?? true else { throw .invalidPayload }
                skipped.append(.init(iteration: skippedIteration, messageKey: try reader.readSecret(SenderChainKey.byteCount)))
            }
            loaded.append(SenderKeyReceivingChain(chainID: id, signingKey: signing, startIteration: start,
                                                  chainKey: SenderChainKey(iteration: iteration, key: key), skipped: skipped))
        }
        try reader.finish()
        chains = loaded
    }

    /// A redacted description: the chains' ids and iterations, never their keys.
    public var description: String {
        "SenderKeyReceiverState(\(chains.map(\.description).joined(separator: ", ")))"
    }
    /// A redacted description.
    public var debugDescription: String { description }
}
