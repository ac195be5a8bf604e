/// The sending side of a sender-key chain (SPEC §5), composed naively.
struct ReferenceSenderChain<B: ReferenceBackend> {
    let chainID: [UInt8]
    private(set) var iteration: UInt64 = 0
    private(set) var chainKey: [UInt8]
    let signingKey: B.SigningKey
    let signingPublicKey: [UInt8]
    private let scratch = ScratchBuffer(count: 128)
    private let paddedScratch = ScratchBuffer(count: 1024)

    /// A chain from its iteration-0 chain key and signing seed; chain_id = SHA-256(chain key).
    init(chainKey: [UInt8], signingSeed: [UInt8]) throws {
        var id = [UInt8](repeating: 0, count: 32)
        chainKey.withUnsafeBytes { ck in id.withUnsafeMutableBytes { B.sha256(ck, into: $0) } }
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

    /// `0x10 || chain_id || u32(iteration) || chain_key || signing_pk`.
    var distribution: [UInt8] {
        var bytes: [UInt8] = [0x10] + chainID
        bytes.appendU32(UInt32(truncatingIfNeeded: iteration))
        return bytes + chainKey + signingPublicKey
    }

    /// `0x11 || chain_id || u32(iteration) || ct || sig`, then the chain advances.
    mutating func encrypt(_ plaintext: [UInt8]) throws -> [UInt8] {
        guard iteration <= UInt64(UInt32.max) else { throw ReferenceError.chainExhausted }
        let messageKey = scratch.slice(0, 32)
        ReferenceChainStep<B>.advance(&chainKey, messageKey: messageKey)
        let keys = senderMessageKeys(UnsafeRawBufferPointer(messageKey), scratch: scratch, backend: B.self)
        let paddedCount = ReferencePadding.paddedCount(plaintext.count)
        let signedCount = 37 + paddedCount + 16
        let total = signedCount + 64
        let currentIteration = UInt32(iteration)
        iteration += 1
        let padded = paddedScratch.prefix(paddedCount)
        ReferencePadding.pad(plaintext, into: padded)
        return try [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            let message = UnsafeMutableRawBufferPointer(buffer)
            message[0] = 0x11
            slice(message, 1).copyBytes(from: chainID)
            writeU32(currentIteration, message, 33)
            try B.aesGCMSeal(
                key: UnsafeRawBufferPointer(slice(keys, 0)), nonce: UnsafeRawBufferPointer(slice(keys, 32, 12)),
                plaintext: UnsafeRawBufferPointer(padded), aad: UnsafeRawBufferPointer(slice(message, 0, 37)),
                into: slice(message, 37, paddedCount + 16))
            B.sign(UnsafeRawBufferPointer(slice(message, 0, signedCount)), with: signingKey,
                   into: slice(message, signedCount, 64))
            initialized = total
        }
    }
}

/// The receiving side: the chains received from one sender (SPEC §5), transactional.
struct ReferenceSenderKeyReceiver<B: ReferenceBackend> {
    struct Chain {
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

    /// Processes a distribution message (a chain already held is ignored).
    mutating func process(distribution bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { throw ReferenceError.invalidMessage }
        guard bytes[0] == 0x10 else { throw ReferenceError.unsupportedVersion }
        guard bytes.count == 101 else { throw ReferenceError.invalidMessage }
        let chainID = Array(bytes[1..<33])
        let signingPublicKey = Array(bytes[69..<101])
        var converted = [UInt8](repeating: 0, count: 32)
        // A valid point in the sense of SPEC §1 (the ed→x conversion validates it).
        try signingPublicKey.withUnsafeBytes { pk in
            try converted.withUnsafeMutableBytes { try B.ed25519PublicKeyToX25519(pk, into: $0) }
        }
        guard chains[chainID] == nil else { return }
        chains[chainID] = Chain(
            iteration: UInt64(bytes.u32(at: 33)), chainKey: Array(bytes[37..<69]),
            signingKey: try B.verifyingKey(signingPublicKey))
    }

    /// Verifies and decrypts a sender-key message.
    mutating func decrypt(_ message: [UInt8]) throws -> [UInt8] {
        guard !message.isEmpty else { throw ReferenceError.invalidMessage }
        guard message[0] == 0x11 else { throw ReferenceError.unsupportedVersion }
        guard message.count >= 1 + 32 + 4 + 16 + 64 else { throw ReferenceError.invalidMessage }
        let chainID = Array(message[1..<33])
        guard var chain = chains[chainID] else { throw ReferenceError.unknownChain }
        let signedCount = message.count - 64
        let valid = message.withUnsafeBytes { bytes in
            B.verify(UnsafeRawBufferPointer(rebasing: bytes[signedCount...]),
                     of: UnsafeRawBufferPointer(rebasing: bytes[0..<signedCount]), with: chain.signingKey)
        }
        guard valid else { throw ReferenceError.invalidSignature }
        let iteration = message.u32(at: 33)
        let messageKey = scratch.slice(0, 32)
        if UInt64(iteration) < chain.iteration {
            guard let stored = chain.skipped.removeValue(forKey: iteration) else {
                throw ReferenceError.duplicateMessage
            }
            if let index = chain.skippedOrder.firstIndex(of: iteration) { chain.skippedOrder.remove(at: index) }
            messageKey.copyBytes(from: stored)
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
        let paddedCount = signedCount - 37 - 16
        let padded = paddedScratch.prefix(paddedCount)
        let plaintext = try message.withUnsafeBytes { bytes in
            try B.aesGCMOpen(
                key: UnsafeRawBufferPointer(slice(keys, 0)), nonce: UnsafeRawBufferPointer(slice(keys, 32, 12)),
                ciphertext: UnsafeRawBufferPointer(rebasing: bytes[37..<signedCount]),
                aad: UnsafeRawBufferPointer(rebasing: bytes[0..<37]), into: padded)
            return try ReferencePadding.unpad(UnsafeRawBufferPointer(padded))
        }
        chains[chainID] = chain
        return plaintext
    }
}

/// (key, nonce) = HKDF(ZERO32, mk, "SessionKit SenderKey v1", 44), in bytes 32..<76 of `scratch`.
private func senderMessageKeys<B: ReferenceBackend>(
    _ messageKey: UnsafeRawBufferPointer, scratch: ScratchBuffer, backend: B.Type
) -> UnsafeMutableRawBufferPointer {
    let keys = scratch.slice(32, 44)
    ReferenceConstants.zero32.withUnsafeBytes { salt in
        ReferenceConstants.senderKeyInfo.withUnsafeBytes { info in
            B.hkdfSHA256(salt: salt, inputKeyMaterial: messageKey, info: info, into: keys)
        }
    }
    return keys
}
