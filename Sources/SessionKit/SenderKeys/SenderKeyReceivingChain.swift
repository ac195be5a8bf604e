import SignalPrimitives

/// One sender-key chain as a receiver holds it (SPEC §5): the chain key at the next expected
/// iteration, the sender's signing key, and the message keys of skipped iterations.
///
/// The skipped keys are kept in insertion order, which is also ascending iteration order
/// (keys are only ever stored while the chain moves forward), so the oldest is first.
struct SenderKeyReceivingChain: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stored message key of an iteration the chain has moved past.
    struct SkippedKey: Sendable {
        /// The iteration of the message this key opens.
        let iteration: UInt32
        /// The 32-byte message key `mk`.
        let messageKey: SecureBytes
    }

    /// The chain's id.
    let chainID: SenderChainID
    /// The key every message of the chain is signed with.
    let signingKey: Ed25519.PublicKey
    /// The chain key at the next iteration not yet reached.
    private(set) var chainKey: SenderChainKey
    /// Skipped message keys, oldest (lowest iteration) first.
    private(set) var skipped: [SkippedKey]

    /// A chain as handed over by a distribution message.
    init(distribution: SenderKeyDistributionMessage) {
        chainID = distribution.chainID
        signingKey = distribution.signingPublicKey
        chainKey = SenderChainKey(iteration: UInt64(distribution.iteration), key: distribution.chainKey)
        skipped = []
    }

    /// A chain as loaded from persisted state; the caller has validated every field.
    init(chainID: SenderChainID, signingKey: Ed25519.PublicKey, chainKey: SenderChainKey, skipped: [SkippedKey]) {
        self.chainID = chainID
        self.signingKey = signingKey
        self.chainKey = chainKey
        self.skipped = skipped
    }

    /// Verifies and decrypts a message of this chain, in SPEC §5's order after the chain
    /// lookup: signature, iteration, AEAD, padding. The chain changes only on success.
    /// - Throws: `SessionError.invalidSignature`, `.duplicateMessage` (an iteration already
    ///   read or evicted), `.tooManySkippedMessages` (more than `ProtocolLimits.defaultMaxSkip`
    ///   ahead), `.invalidMessage` (the tag does not verify), `.invalidPadding`.
    mutating func decrypt(_ message: SenderKeyMessage) throws(SessionError) -> [UInt8] {
        let bytes = message.serialized
        let signatureStart = message.signatureStart
        let signed = bytes.withUnsafeBytes { all in
            signingKey.isValidSignature(UnsafeRawBufferPointer(rebasing: all[signatureStart...]),
                                        for: UnsafeRawBufferPointer(rebasing: all[..<signatureStart]))
        }
        guard signed else { throw .invalidSignature }

        // The candidate state: committed at the end, only once the message has opened.
        let target = UInt64(message.iteration)
        var newChainKey = chainKey
        var newSkipped = skipped
        let messageKey: SecureBytes
        if target < chainKey.iteration {
            guard let index = Self.index(of: message.iteration, in: skipped) else { throw .duplicateMessage }
            messageKey = skipped[index].messageKey
            newSkipped.remove(at: index)
        } else {
            guard target - chainKey.iteration <= UInt64(ProtocolLimits.defaultMaxSkip) else {
                throw .tooManySkippedMessages
            }
            while newChainKey.iteration < target {
                let (key, next) = newChainKey.step()
                newSkipped.append(SkippedKey(iteration: UInt32(newChainKey.iteration), messageKey: key))
                newChainKey = next
            }
            let excess = newSkipped.count - ProtocolLimits.defaultMaxStored
            if excess > 0 { newSkipped.removeFirst(excess) }
            let (key, next) = newChainKey.step()
            messageKey = key
            newChainKey = next
        }

        let keys = SenderMessageKeys(messageKey: messageKey)
        let ciphertextRange = message.ciphertextRange
        let plaintext = try bytes.withBytes { (all: UnsafeRawBufferPointer) throws(SessionError) in
            try keys.open(UnsafeRawBufferPointer(rebasing: all[ciphertextRange]),
                          aad: UnsafeRawBufferPointer(rebasing: all[0 ..< SenderKeyMessage.headerByteCount]))
        }

        chainKey = newChainKey
        skipped = newSkipped
        return plaintext
    }

    /// The position of `iteration` in the ascending `keys`, by binary search.
    static func index(of iteration: UInt32, in keys: [SkippedKey]) -> Int? {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].iteration < iteration { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low].iteration == iteration ? low : nil
    }

    /// A redacted description: chain id, iteration and the number of skipped keys.
    var description: String {
        "SenderKeyReceivingChain(chain: \(Hex.encode(chainID.rawRepresentation)), iteration: \(chainKey.iteration), skipped: \(skipped.count), keys redacted)"
    }
    /// A redacted description.
    var debugDescription: String { description }
}
