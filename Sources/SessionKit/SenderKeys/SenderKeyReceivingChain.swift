import SignalPrimitives

/// One sender-key chain as a receiver holds it (SPEC §5): the chain key at the next expected
/// iteration, the iteration this copy started at (the distribution's), the sender's signing
/// key, and the message keys of skipped iterations.
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
    /// The iteration of the distribution this copy was made from: messages below it were sent
    /// before this member was given the chain (`messageKeyUnavailable`).
    let startIteration: UInt32
    /// The chain key at the next iteration not yet reached.
    private(set) var chainKey: SenderChainKey
    /// Skipped message keys, oldest (lowest iteration) first.
    private(set) var skipped: [SkippedKey]

    /// A chain as handed over by a distribution message.
    init(distribution: SenderKeyDistributionMessage) {
        chainID = distribution.chainID
        signingKey = distribution.signingPublicKey
        startIteration = distribution.iteration
        chainKey = SenderChainKey(iteration: UInt64(distribution.iteration), key: distribution.chainKey)
        skipped = []
    }

    /// A chain as loaded from persisted state; the caller has validated every field.
    init(chainID: SenderChainID, signingKey: Ed25519.PublicKey, startIteration: UInt32, chainKey: SenderChainKey, skipped: [SkippedKey]) {
        self.chainID = chainID
        self.signingKey = signingKey
        self.startIteration = startIteration
        self.chainKey = chainKey
        self.skipped = skipped
    }

    /// Verifies and decrypts a message of this chain received for `group` from `sender`, in
    /// SPEC §5's order after the chain lookup: the signature over `Encode(group) ||
    /// Encode(sender) || message`, the iteration, the commitment, AEAD, padding. The chain
    /// changes only on success.
    /// - Throws: `SessionError.invalidSignature` (also for a message relabeled to another group
    ///   or re-attributed to another sender), `.messageKeyUnavailable` (an iteration below the
    ///   one this copy started at), `.duplicateMessage` (an iteration already read or evicted),
    ///   `.tooManySkippedMessages` (more than `ProtocolLimits.defaultMaxSkip` ahead),
    ///   `.invalidMessage` (the commitment differs, or the tag does not verify),
    ///   `.invalidPadding`.
    mutating func decrypt(_ message: SenderKeyMessage, group: GroupID, sender: ProtocolAddress) throws(SessionError) -> [UInt8] {
        let bytes = message.serialized
        let signatureStart = message.signatureStart
        let context = SenderKeyMessage.context(group: group, sender: sender)
        let signed = bytes.withUnsafeBytes { all in
            let signedBytes = context + UnsafeRawBufferPointer(rebasing: all[..<signatureStart])
            return signingKey.isValidSignature(Array(all[signatureStart...]), for: signedBytes)
        }
        guard signed else { throw .invalidSignature }

        // The candidate state: committed at the end, only once the message has opened.
        let target = UInt64(message.iteration)
        var newChainKey = chainKey
        var newSkipped = skipped
        let messageKey: SecureBytes
        if target < chainKey.iteration {
            if let index = Self.index(of: message.iteration, in: skipped) {
                messageKey = skipped[index].messageKey
                newSkipped.remove(at: index)
            } else if message.iteration < startIteration {
                throw .messageKeyUnavailable
            } else {
                throw .duplicateMessage
            }
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
            // The commitment first: a key that does not commit to this message does no AEAD work.
            guard keys.commitmentMatches(all.slice(SenderKeyMessage.commitmentRange)) else { throw .invalidMessage }
            let aad = SenderKeyMessage.associatedData(context: context, head: all.slice(0 ..< SenderKeyMessage.ciphertextStart))
            return try aad.withBytes { (aad: UnsafeRawBufferPointer) throws(SessionError) in
                try keys.open(all.slice(ciphertextRange), aad: aad)
            }
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
        "SenderKeyReceivingChain(chain: \(Hex.encode(chainID.rawRepresentation)), start: \(startIteration), "
            + "iteration: \(chainKey.iteration), skipped: \(skipped.count), keys redacted)"
    }
    /// A redacted description.
    var debugDescription: String { description }
}
