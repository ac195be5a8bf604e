/// The sending side of a sender-key chain (SPEC §5, version 2), composed naively: one group,
/// one sender, every message bound to both and key-committing.
struct ReferenceSenderChain<B: ReferenceBackend> {
    let group: [UInt8]
    let sender: ReferenceAddress
    let chainID: [UInt8]
    private(set) var iteration: UInt64 = 0
    private(set) var chainKey: [UInt8]
    let signingKey: B.SigningKey
    let signingPublicKey: [UInt8]
    private let scratch = ScratchBuffer(count: 128)
    private let paddedScratch = ScratchBuffer(count: 1024)

    /// A chain from its iteration-0 chain key and signing seed; chain_id = SHA-256(chain key).
    init(group: [UInt8], sender: ReferenceAddress, chainKey: [UInt8], signingSeed: [UInt8]) throws {
        var id = [UInt8](repeating: 0, count: 32)
        chainKey.withUnsafeBytes { ck in id.withUnsafeMutableBytes { B.sha256(ck, into: $0) } }
        self.group = group
        self.sender = sender
        chainID = id
        self.chainKey = chainKey
        signingKey = try B.signingKey(seed: signingSeed)
        signingPublicKey = B.publicKey(of: signingKey)
    }

    /// Advances the chain to `target` without producing messages.
    mutating func advance(to target: UInt64) {
        let discard = scratch.slice(0, 32)
        while iteration < target {
            ReferenceChainStep<B>.advance(&chainKey, messageKey: discard)
            iteration += 1
        }
    }

    /// `0x23 || Encode(group) || chain_id || u32(iteration) || chain_key || signing_pk`.
    var distribution: [UInt8] {
        var bytes: [UInt8] = [ReferenceConstants.distributionType] + encodeGroup(group) + chainID
        bytes.appendU32(UInt32(truncatingIfNeeded: iteration))
        return bytes + chainKey + signingPublicKey
    }

    /// `0x24 || chain_id || u32(iteration) || commit || ct || sig`, then the chain advances.
    /// ct is AES-GCM with aad = `0x24 || Encode(group) || Encode(sender) || chain_id ||
    /// u32(iteration) || commit`; sig signs `Encode(group) || Encode(sender) || message before sig`.
    mutating func encrypt(_ plaintext: [UInt8]) throws -> [UInt8] {
        guard iteration <= UInt64(UInt32.max) else { throw ReferenceError.chainExhausted }
        let messageKey = scratch.slice(0, 32)
        ReferenceChainStep<B>.advance(&chainKey, messageKey: messageKey)
        let keys = senderMessageKeys(UnsafeRawBufferPointer(messageKey), scratch: scratch, backend: B.self)
        let context = encodeGroup(group) + sender.encoded
        let head = ReferenceConstants.senderKeyHeadCount
        let paddedCount = ReferencePadding.paddedCount(plaintext.count)
        let signatureStart = head + paddedCount + ReferenceConstants.tagCount
        let currentIteration = UInt32(iteration)
        iteration += 1
        let padded = paddedScratch.prefix(paddedCount)
        ReferencePadding.pad(plaintext, into: padded)
        // Encode(group) || Encode(sender) || the message: what the signature covers.
        var signed = [UInt8](repeating: 0, count: context.count + signatureStart)
        try signed.withUnsafeMutableBytes { all in
            slice(all, 0, context.count).copyBytes(from: context)
            let message = UnsafeMutableRawBufferPointer(rebasing: all[context.count...])
            message[0] = ReferenceConstants.senderKeyMessageType
            slice(message, 1).copyBytes(from: chainID)
            writeU32(currentIteration, message, 33)
            slice(message, 37).copyMemory(from: UnsafeRawBufferPointer(slice(keys, 44)))
            let aad = [ReferenceConstants.senderKeyMessageType] + context + Array(slice(message, 1, head - 1))
            try aad.withUnsafeBytes { aad in
                try B.aesGCMSeal(
                    key: UnsafeRawBufferPointer(slice(keys, 0)), nonce: UnsafeRawBufferPointer(slice(keys, 32, 12)),
                    plaintext: UnsafeRawBufferPointer(padded), aad: aad,
                    into: slice(message, head, paddedCount + ReferenceConstants.tagCount))
            }
        }
        var signature = [UInt8](repeating: 0, count: 64)
        signed.withUnsafeBytes { s in signature.withUnsafeMutableBytes { B.sign(s, with: signingKey, into: $0) } }
        return Array(signed[context.count...]) + signature
    }
}

/// The receiving side: the chains received from one sender in one group (SPEC §5), transactional.
struct ReferenceSenderKeyReceiver<B: ReferenceBackend> {
    struct Chain {
        let startIteration: UInt32
        var iteration: UInt64
        var chainKey: [UInt8]
        let signingKey: B.VerifyingKey
        var skipped: [UInt32: [UInt8]] = [:]
        var skippedOrder: [UInt32] = []
    }

    private(set) var chains: [[UInt8]: Chain] = [:]
    private let scratch = ScratchBuffer(count: 128)
    private let paddedScratch = ScratchBuffer(count: 1024)

    init() {}

    /// Processes a distribution message received for `group` (a chain already held is ignored).
    mutating func process(distribution bytes: [UInt8], group: [UInt8]) throws {
        guard !bytes.isEmpty else { throw ReferenceError.invalidMessage }
        guard bytes[0] == ReferenceConstants.distributionType else { throw ReferenceError.unsupportedVersion }
        guard bytes.count >= 2 else { throw ReferenceError.invalidMessage }
        let groupCount = Int(bytes[1])
        guard groupCount > 0, bytes.count == 2 + groupCount + 32 + 4 + 32 + 32 else { throw ReferenceError.invalidMessage }
        guard bytes[2..<(2 + groupCount)].elementsEqual(group) else { throw ReferenceError.invalidMessage }
        var offset = 2 + groupCount
        let chainID = Array(bytes[offset..<(offset + 32)])
        offset += 32
        let iteration = bytes.u32(at: offset)
        offset += 4
        let chainKey = Array(bytes[offset..<(offset + 32)])
        offset += 32
        let signingPublicKey = Array(bytes[offset..<(offset + 32)])
        var converted = [UInt8](repeating: 0, count: 32)
        // A valid point in the sense of SPEC §1 (the ed→x conversion validates it).
        try signingPublicKey.withUnsafeBytes { pk in
            try converted.withUnsafeMutableBytes { try B.ed25519PublicKeyToX25519(pk, into: $0) }
        }
        guard chains[chainID] == nil else { return }
        chains[chainID] = Chain(
            startIteration: iteration, iteration: UInt64(iteration), chainKey: chainKey,
            signingKey: try B.verifyingKey(signingPublicKey))
    }

    /// Verifies and decrypts a sender-key message received for `group` from `sender`.
    mutating func decrypt(_ message: [UInt8], group: [UInt8], sender: ReferenceAddress) throws -> [UInt8] {
        guard !message.isEmpty else { throw ReferenceError.invalidMessage }
        guard message[0] == ReferenceConstants.senderKeyMessageType else { throw ReferenceError.unsupportedVersion }
        let head = ReferenceConstants.senderKeyHeadCount
        guard message.count >= head + 16 + 64 else { throw ReferenceError.invalidMessage }
        let chainID = Array(message[1..<33])
        guard var chain = chains[chainID] else { throw ReferenceError.unknownChain }
        let signatureStart = message.count - 64
        let context = encodeGroup(group) + sender.encoded
        let signed = context + message[0..<signatureStart]
        let valid = message.withUnsafeBytes { bytes in
            signed.withUnsafeBytes { s in
                B.verify(UnsafeRawBufferPointer(rebasing: bytes[signatureStart...]), of: s, with: chain.signingKey)
            }
        }
        guard valid else { throw ReferenceError.invalidSignature }
        let iteration = message.u32(at: 33)
        let messageKey = scratch.slice(0, 32)
        if UInt64(iteration) < chain.iteration {
            if let stored = chain.skipped.removeValue(forKey: iteration) {
                if let index = chain.skippedOrder.firstIndex(of: iteration) { chain.skippedOrder.remove(at: index) }
                messageKey.copyBytes(from: stored)
            } else if iteration < chain.startIteration {
                throw ReferenceError.messageKeyUnavailable
            } else {
                throw ReferenceError.duplicateMessage
            }
        } else {
            guard UInt64(iteration) - chain.iteration <= UInt64(ReferenceConstants.maxSkip) else {
                throw ReferenceError.tooManySkippedMessages
            }
            while chain.iteration < UInt64(iteration) {
                ReferenceChainStep<B>.advance(&chain.chainKey, messageKey: messageKey)
                let skippedIteration = UInt32(chain.iteration)
                chain.skipped[skippedIteration] = Array(messageKey)
                chain.skippedOrder.append(skippedIteration)
                while chain.skipped.count > ReferenceConstants.maxStored, !chain.skippedOrder.isEmpty {
                    chain.skipped.removeValue(forKey: chain.skippedOrder.removeFirst())
                }
                chain.iteration += 1
            }
            ReferenceChainStep<B>.advance(&chain.chainKey, messageKey: messageKey)
            chain.iteration += 1
        }
        let keys = senderMessageKeys(UnsafeRawBufferPointer(messageKey), scratch: scratch, backend: B.self)
        let paddedCount = signatureStart - head - 16
        let padded = paddedScratch.prefix(paddedCount)
        let plaintext = try message.withUnsafeBytes { bytes in
            // The commitment, before any AEAD work.
            guard B.constantTimeEquals(UnsafeRawBufferPointer(slice(keys, 44)), UnsafeRawBufferPointer(rebasing: bytes[37..<head]))
            else { throw ReferenceError.invalidMessage }
            let aad = [ReferenceConstants.senderKeyMessageType] + context + message[1..<head]
            try aad.withUnsafeBytes { aad in
                try B.aesGCMOpen(
                    key: UnsafeRawBufferPointer(slice(keys, 0)), nonce: UnsafeRawBufferPointer(slice(keys, 32, 12)),
                    ciphertext: UnsafeRawBufferPointer(rebasing: bytes[head..<signatureStart]), aad: aad, into: padded)
            }
            return try ReferencePadding.unpad(UnsafeRawBufferPointer(padded))
        }
        chains[chainID] = chain
        return plaintext
    }
}

/// (key, nonce, commit) = HKDF(ZERO32, mk, "SessionKit SenderKey v2", 76), in bytes 32..<108
/// of `scratch`: key at 0, nonce at 32, commit at 44 of the returned slice.
private func senderMessageKeys<B: ReferenceBackend>(
    _ messageKey: UnsafeRawBufferPointer, scratch: ScratchBuffer, backend: B.Type
) -> UnsafeMutableRawBufferPointer {
    let keys = scratch.slice(32, ReferenceConstants.senderKeyMaterialCount)
    ReferenceConstants.zero32.withUnsafeBytes { salt in
        ReferenceConstants.senderKeyInfo.withUnsafeBytes { info in
            B.hkdfSHA256(salt: salt, inputKeyMaterial: messageKey, info: info, into: keys)
        }
    }
    return keys
}
