/// A Double Ratchet session (SPEC §4), composed naively from a backend's primitives.
///
/// A value type: decryption works on a copy and commits it only on success. New ratchet keys
/// come from `keySource` (random in the benchmarks, a fixed list in the vector tests).
struct ReferenceRatchet<B: ReferenceBackend> {
    /// A stored skipped message key's position.
    struct SkippedPosition: Hashable {
        let ratchetKey: [UInt8]
        let counter: UInt32
    }

    var associatedData: [UInt8]
    var rootKey: [UInt8]
    var sendingKey: B.AgreementKey
    var sendingPublicKey: [UInt8]
    var remoteKey: [UInt8]?
    var sendingChain: [UInt8]?
    var receivingChain: [UInt8]?
    var sendCounter: UInt64 = 0
    var receiveCounter: UInt64 = 0
    var previousCounter: UInt64 = 0
    var skipped: [SkippedPosition: [UInt8]] = [:]
    var skippedOrder: [SkippedPosition] = []
    /// When each skipped key was stored (seconds since 1970), as loaded; absent: 0 (unknown).
    var skippedStoredAt: [SkippedPosition: UInt64] = [:]
    var maxSkip = ReferenceConstants.maxSkip
    var maxStored = ReferenceConstants.maxStored
    let keySource: () throws -> (key: B.AgreementKey, publicKey: [UInt8])
    /// Fixed scratch for keys and AAD (never grows, so slices of it stay valid).
    let scratch: ScratchBuffer
    /// Growable scratch for padded plaintexts.
    let paddedScratch: ScratchBuffer

    /// Alice after X3DH: a new sending key, DHr = SPK_B, (RK, CKs) = KDF_RK(SK, DH(DHs, DHr)).
    static func initiator(
        sharedSecret: [UInt8], associatedData: [UInt8], remoteSignedPreKey: [UInt8],
        keySource: @escaping () throws -> (key: B.AgreementKey, publicKey: [UInt8])
    ) throws -> ReferenceRatchet {
        let (key, publicKey) = try keySource()
        var session = ReferenceRatchet(
            associatedData: associatedData, rootKey: sharedSecret, sendingKey: key, sendingPublicKey: publicKey,
            remoteKey: remoteSignedPreKey, keySource: keySource,
            scratch: ScratchBuffer(count: 512), paddedScratch: ScratchBuffer(count: 1024))
        session.sendingChain = try session.rootStep()
        return session
    }

    /// Bob after X3DH: DHs = SPK_B, no remote key, RK = SK.
    static func responder(
        sharedSecret: [UInt8], associatedData: [UInt8], signedPreKey: (key: B.AgreementKey, publicKey: [UInt8]),
        keySource: @escaping () throws -> (key: B.AgreementKey, publicKey: [UInt8])
    ) -> ReferenceRatchet {
        ReferenceRatchet(
            associatedData: associatedData, rootKey: sharedSecret, sendingKey: signedPreKey.key,
            sendingPublicKey: signedPreKey.publicKey, remoteKey: nil, keySource: keySource,
            scratch: ScratchBuffer(count: 512), paddedScratch: ScratchBuffer(count: 1024))
    }

    /// The number of stored skipped message keys.
    var skippedCount: Int { skipped.count }

    // MARK: Encrypt

    /// Encrypts `plaintext`: `header || AEAD(pad(plaintext))`.
    mutating func encrypt(_ plaintext: [UInt8]) throws -> [UInt8] {
        guard sendingChain != nil else { throw ReferenceError.invalidMessage }
        guard sendCounter <= UInt64(UInt32.max), previousCounter <= UInt64(UInt32.max) else {
            throw ReferenceError.chainExhausted
        }
        let messageKey = scratch.slice(0, 32)
        Self.advance(&sendingChain, messageKey: messageKey)
        let paddedCount = ReferencePadding.paddedCount(plaintext.count)
        let total = ReferenceConstants.headerCount + paddedCount + ReferenceConstants.tagCount
        let counter = UInt32(sendCounter)
        let previous = UInt32(previousCounter)
        sendCounter += 1
        return try [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            let message = UnsafeMutableRawBufferPointer(buffer)
            message[0] = ReferenceConstants.messageType
            slice(message, 1).copyBytes(from: sendingPublicKey)
            writeU32(previous, message, 33)
            writeU32(counter, message, 37)
            let header = UnsafeRawBufferPointer(slice(message, 0, ReferenceConstants.headerCount))
            let padded = paddedScratch.prefix(paddedCount)
            ReferencePadding.pad(plaintext, into: padded)
            try seal(
                messageKey: UnsafeRawBufferPointer(messageKey), header: header, padded: UnsafeRawBufferPointer(padded),
                into: slice(message, ReferenceConstants.headerCount, paddedCount + ReferenceConstants.tagCount))
            initialized = total
        }
    }

    // MARK: Decrypt

    /// Decrypts a 0x21 message, transactionally.
    mutating func decrypt(_ message: [UInt8]) throws -> [UInt8] {
        guard !message.isEmpty else { throw ReferenceError.invalidMessage }
        guard message[0] == ReferenceConstants.messageType else { throw ReferenceError.unsupportedVersion }
        guard message.count >= ReferenceConstants.headerCount + ReferenceConstants.tagCount else {
            throw ReferenceError.invalidMessage
        }
        let ratchetKey = Array(message[1..<33])
        guard ratchetKey.withUnsafeBytes(isCanonicalX25519) else { throw ReferenceError.invalidKey }
        var trial = self
        let plaintext = try trial.decrypt(
            message, ratchetKey: ratchetKey, previous: UInt64(message.u32(at: 33)), counter: message.u32(at: 37))
        self = trial
        return plaintext
    }

    private mutating func decrypt(
        _ message: [UInt8], ratchetKey: [UInt8], previous: UInt64, counter: UInt32
    ) throws -> [UInt8] {
        let messageKey = scratch.slice(0, 32)
        // 1. A stored skipped key.
        let position = SkippedPosition(ratchetKey: ratchetKey, counter: counter)
        if let stored = skipped.removeValue(forKey: position) {
            if let index = skippedOrder.firstIndex(of: position) { skippedOrder.remove(at: index) }
            messageKey.copyBytes(from: stored)
            return try open(message, messageKey: UnsafeRawBufferPointer(messageKey))
        }
        var steppedRatchet = false
        if let remoteKey, remoteKey == ratchetKey {
            guard receivingChain != nil else { throw ReferenceError.invalidMessage }
            guard UInt64(counter) >= receiveCounter else { throw ReferenceError.duplicateMessage }
        } else {
            // 2. The DH ratchet step (receiving half; the sending half after authentication).
            try skip(until: previous)
            previousCounter = sendCounter
            sendCounter = 0
            receiveCounter = 0
            remoteKey = ratchetKey
            receivingChain = try rootStep()
            sendingChain = nil
            steppedRatchet = true
        }
        // 3.
        try skip(until: UInt64(counter))
        Self.advance(&receivingChain, messageKey: messageKey)
        receiveCounter += 1
        let plaintext = try open(message, messageKey: UnsafeRawBufferPointer(messageKey))
        if steppedRatchet {
            (sendingKey, sendingPublicKey) = try keySource()
            sendingChain = try rootStep()
        }
        return plaintext
    }

    /// SPEC §4 skip(until).
    private mutating func skip(until: UInt64) throws {
        guard receiveCounter + UInt64(maxSkip) >= until else { throw ReferenceError.tooManySkippedMessages }
        guard receivingChain != nil, let remoteKey else { return }
        let messageKey = scratch.slice(32, 32)
        while receiveCounter < until {
            Self.advance(&receivingChain, messageKey: messageKey)
            let position = SkippedPosition(ratchetKey: remoteKey, counter: UInt32(receiveCounter))
            skipped[position] = Array(messageKey)
            skippedOrder.append(position)
            while skipped.count > maxStored, !skippedOrder.isEmpty {
                skipped.removeValue(forKey: skippedOrder.removeFirst())
            }
            receiveCounter += 1
        }
    }

    // MARK: Steps

    /// (RK, CK) = KDF_RK(RK, DH(DHs, DHr)); returns CK.
    private mutating func rootStep() throws -> [UInt8] {
        guard let remoteKey else { throw ReferenceError.invalidMessage }
        let dh = scratch.slice(64, 32)
        try remoteKey.withUnsafeBytes { try B.x25519(sendingKey, publicKey: $0, into: dh) }
        let output = scratch.slice(96, 64)
        rootKey.withUnsafeBytes { rk in
            ReferenceConstants.ratchetInfo.withUnsafeBytes { info in
                B.hkdfSHA256(salt: rk, inputKeyMaterial: UnsafeRawBufferPointer(dh), info: info, into: output)
            }
        }
        rootKey.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(slice(output, 0))) }
        return Array(slice(output, 32))
    }

    /// KDF_CK on an optional chain, in place (the array is taken out so it stays unique).
    private static func advance(_ chain: inout [UInt8]?, messageKey: UnsafeMutableRawBufferPointer) {
        if var key = chain {
            chain = nil
            ReferenceChainStep<B>.advance(&key, messageKey: messageKey)
            chain = key
        }
    }

    /// MSGKEYS(mk) then AEAD with aad = AD || header.
    private func seal(
        messageKey: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer, padded: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws {
        let keys = messageKeys(messageKey)
        let aad = scratch.slice(160 + 64, associatedData.count + header.count)
        slice(aad, 0, associatedData.count).copyBytes(from: associatedData)
        slice(aad, associatedData.count, header.count).copyMemory(from: header)
        try B.aesGCMSeal(
            key: UnsafeRawBufferPointer(slice(keys, 0)), nonce: UnsafeRawBufferPointer(slice(keys, 32, 12)),
            plaintext: padded, aad: UnsafeRawBufferPointer(aad), into: output)
    }

    private func open(_ message: [UInt8], messageKey: UnsafeRawBufferPointer) throws -> [UInt8] {
        let keys = messageKeys(messageKey)
        let bodyCount = message.count - ReferenceConstants.headerCount
        let paddedCount = bodyCount - ReferenceConstants.tagCount
        return try message.withUnsafeBytes { bytes in
            let header = UnsafeRawBufferPointer(rebasing: bytes[0..<ReferenceConstants.headerCount])
            let aad = scratch.slice(160 + 64, associatedData.count + header.count)
            slice(aad, 0, associatedData.count).copyBytes(from: associatedData)
            slice(aad, associatedData.count, header.count).copyMemory(from: header)
            let padded = paddedScratch.prefix(paddedCount)
            try B.aesGCMOpen(
                key: UnsafeRawBufferPointer(slice(keys, 0)), nonce: UnsafeRawBufferPointer(slice(keys, 32, 12)),
                ciphertext: UnsafeRawBufferPointer(rebasing: bytes[ReferenceConstants.headerCount...]),
                aad: UnsafeRawBufferPointer(aad), into: padded)
            return try ReferencePadding.unpad(UnsafeRawBufferPointer(padded))
        }
    }

    /// (key, nonce) = HKDF(ZERO32, mk, "SessionKit MessageKeys v2", 44), in the scratch buffer.
    private func messageKeys(_ messageKey: UnsafeRawBufferPointer) -> UnsafeMutableRawBufferPointer {
        let keys = scratch.slice(160, 44)
        ReferenceConstants.zero32.withUnsafeBytes { salt in
            ReferenceConstants.messageKeysInfo.withUnsafeBytes { info in
                B.hkdfSHA256(salt: salt, inputKeyMaterial: messageKey, info: info, into: keys)
            }
        }
        return keys
    }
}

/// Writes `value` big-endian at `offset`.
@inline(__always)
func writeU32(_ value: UInt32, _ buffer: UnsafeMutableRawBufferPointer, _ offset: Int) {
    buffer[offset] = UInt8(truncatingIfNeeded: value >> 24)
    buffer[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
    buffer[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
    buffer[offset + 3] = UInt8(truncatingIfNeeded: value)
}
