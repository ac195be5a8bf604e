import SignalPrimitives

/// The Double Ratchet state of one session (SPEC §4) and its encrypt and decrypt steps.
///
/// A value type. `decrypt` is transactional by construction: every step that can fail
/// (skipping, the DH computations, AEAD, unpadding) works on local copies — candidate chains,
/// a candidate root key and a list of pending skipped keys — and the state is assigned only
/// after the message authenticated and unpadded; the assignments cannot fail. The new
/// sending key pair of a DH step is drawn from the random source only at that point, so a
/// failed decrypt draws nothing.
struct DoubleRatchet: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// RK.
    var rootKey: RootKey
    /// DHs: our current ratchet key pair.
    var sendingRatchetKey: X25519.PrivateKey
    /// CKs; `nil` only for a responder that has not received its first message.
    var sendingChain: ChainKey?
    /// Ns: the number of the next message we send (at most 2^32).
    var sendCounter: UInt64
    /// PN: the length of our previous sending chain.
    var previousSendCounter: UInt64
    /// DHr: the peer's current ratchet key, if known.
    var remoteRatchetKey: X25519.PublicKey?
    /// CKr and Nr for DHr; `nil` until a message on DHr has been received.
    var receivingChain: ReceiverChain?
    /// Keys of skipped messages, in age order.
    var skippedKeys: SkippedMessageKeys

    /// Alice's initialisation: DHs = a new key from `random`, DHr = SPK_B,
    /// (RK, CKs) = KDF_RK(SK, DH(DHs, DHr)).
    /// - Throws: `SessionError.invalidKey` when DH(DHs, SPK_B) is all zeros.
    static func initiator(
        sharedSecret: SymmetricKey, remoteSignedPreKey: X25519.PublicKey, random: any RandomSource
    ) throws(SessionError) -> DoubleRatchet {
        let sendingKey = try newRatchetKey(random)
        let (rootKey, chainKey) = try RootKey(storage: sharedSecret.storage).ratchet(privateKey: sendingKey, publicKey: remoteSignedPreKey)
        return DoubleRatchet(
            rootKey: rootKey, sendingRatchetKey: sendingKey, sendingChain: chainKey, sendCounter: 0,
            previousSendCounter: 0, remoteRatchetKey: remoteSignedPreKey, receivingChain: nil,
            skippedKeys: SkippedMessageKeys())
    }

    /// Bob's initialisation: DHs = SPK_B's key pair, DHr = none, RK = SK.
    static func responder(sharedSecret: SymmetricKey, signedPreKey: X25519.PrivateKey) -> DoubleRatchet {
        DoubleRatchet(
            rootKey: RootKey(storage: sharedSecret.storage), sendingRatchetKey: signedPreKey, sendingChain: nil,
            sendCounter: 0, previousSendCounter: 0, remoteRatchetKey: nil, receivingChain: nil,
            skippedKeys: SkippedMessageKeys())
    }

    /// Nr (0 when there is no receiving chain).
    var receiveCounter: UInt64 { receivingChain?.counter ?? 0 }

    // MARK: Encrypt

    /// Encrypt of SPEC §4: (CKs, mk) = KDF_CK(CKs); header = 0x21 || DHs.pk || u32(PN) || u32(Ns);
    /// Ns += 1; ct = AEAD(MSGKEYS(mk), pad(plaintext), aad = AD || header), padded with
    /// `contentType` as the first byte (SPEC §2). Returns `prefix || header || ct`.
    /// - Throws: `SessionError.chainExhausted` when Ns or PN does not fit in 32 bits,
    ///   `SessionError.noSession` without a sending chain, `SessionError.invalidMessage` for a
    ///   plaintext too long to pad, `SessionError.primitive` when AES-GCM is unavailable.
    mutating func encrypt(
        _ plaintext: [UInt8], associatedData: [UInt8], prefix: [UInt8], contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> [UInt8] {
        guard let chain = sendingChain else { throw .noSession }
        guard sendCounter <= UInt64(UInt32.max), previousSendCounter <= UInt64(UInt32.max) else { throw .chainExhausted }
        let paddedCount = try MessagePadding.checkedPaddedLength(forPlaintextCount: plaintext.count)
        let headerStart = prefix.count
        let bodyStart = headerStart + RatchetMessage.headerByteCount
        var message = [UInt8](repeating: 0, count: bodyStart + paddedCount + RatchetMessage.tagByteCount)
        let (previousCounter, counter) = (UInt32(truncatingIfNeeded: previousSendCounter), UInt32(truncatingIfNeeded: sendCounter))
        let ratchetKey = sendingRatchetKey.publicKey
        let nextChain = try message.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(SessionError) -> ChainKey in
            prefix.withUnsafeBytes { out.slice(0 ..< headerStart).copyMemory(from: $0) }
            let header = out.slice(headerStart ..< bodyStart)
            RatchetMessage.writeHeader(ratchetKey: ratchetKey, previousCounter: previousCounter, counter: counter, into: header)
            return try Self.withAssociatedData(associatedData, header: UnsafeRawBufferPointer(header)) { (aad: UnsafeRawBufferPointer) throws(SessionError) -> ChainKey in
                try withSecretScratch(MessageKey.byteCount) { (messageKey: UnsafeMutableRawBufferPointer) throws(SessionError) -> ChainKey in
                    let next = chain.advance(writingMessageKeyInto: messageKey)
                    try plaintext.withBytes { (plaintext: UnsafeRawBufferPointer) throws(SessionError) in
                        try MessageKeys.seal(
                            plaintext, messageKey: UnsafeRawBufferPointer(messageKey),
                            authenticating: aad, into: out.slice(bodyStart ..< out.count), contentType: contentType)
                    }
                    return next
                }
            }
        }
        sendingChain = nextChain
        sendCounter += 1
        return message
    }

    // MARK: Decrypt

    /// Decrypt of SPEC §4, transactionally (see the type's documentation). The padded plaintext
    /// must have `contentType` as its first byte (SPEC §2); another type is `invalidPadding`,
    /// like any padding that does not unpad, and leaves the state unchanged.
    ///
    /// 1. A stored skipped key for (header.dh, header.n) is used and deleted.
    /// 2. header.dh = DHr: without a receiving chain `invalidMessage`; n < Nr
    ///    `duplicateMessage` (before any AEAD work); else skip(n) and the next key.
    /// 3. Otherwise skip(header.pn) on the current chain, then the DH step, skip(n), the next
    ///    key; after authentication a new DHs is drawn and the sending chain derived.
    /// - Throws: `invalidMessage`, `duplicateMessage`, `tooManySkippedMessages`, `invalidKey`
    ///   (a small-order ratchet key), `invalidPadding`, or `primitive`; the state is unchanged.
    mutating func decrypt(
        _ message: RatchetMessage, associatedData: [UInt8], configuration: SessionConfiguration,
        random: any RandomSource, contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> [UInt8] {
        let ratchetKey = message.ratchetKey
        if !skippedKeys.isEmpty {
            let slot = SkippedMessageKeys.Slot(ratchetKey: ratchetKey, counter: message.counter)
            if let stored = skippedKeys.messageKey(for: slot) {
                let plaintext = try stored.storage.withUnsafeBytes { (key: UnsafeRawBufferPointer) throws(SessionError) in
                    try Self.open(message, messageKey: key, associatedData: associatedData, contentType: contentType)
                }
                skippedKeys.remove(slot)
                return plaintext
            }
        }
        var pending: [(slot: SkippedMessageKeys.Slot, messageKey: MessageKey)] = []
        if let remote = remoteRatchetKey, remote == ratchetKey {
            guard let current = receivingChain else { throw .invalidMessage }
            guard UInt64(message.counter) >= current.counter else { throw .duplicateMessage }
            var candidate: ReceiverChain? = current
            try ReceiverChain.skip(&candidate, of: remote, until: message.counter, maxSkip: configuration.maxSkip, into: &pending)
            var chain = candidate ?? current
            let plaintext = try Self.openNext(message, chain: &chain, associatedData: associatedData, contentType: contentType)
            receivingChain = chain
            skippedKeys.append(pending, maxStored: configuration.maxStored)
            return plaintext
        }
        var previousChain = receivingChain
        try ReceiverChain.skip(
            &previousChain, of: remoteRatchetKey, until: message.previousCounter, maxSkip: configuration.maxSkip, into: &pending)
        let (receivingRoot, receivingChainKey) = try rootKey.ratchet(privateKey: sendingRatchetKey, publicKey: ratchetKey)
        let fresh = ReceiverChain(chainKey: receivingChainKey, counter: 0)
        var candidate: ReceiverChain? = fresh
        try ReceiverChain.skip(&candidate, of: ratchetKey, until: message.counter, maxSkip: configuration.maxSkip, into: &pending)
        var chain = candidate ?? fresh
        let plaintext = try Self.openNext(message, chain: &chain, associatedData: associatedData, contentType: contentType)
        // Authenticated and unpadded: only now draw the new sending key pair.
        let newSendingKey = try Self.newRatchetKey(random)
        let (sendingRoot, sendingChainKey) = try receivingRoot.ratchet(privateKey: newSendingKey, publicKey: ratchetKey)
        rootKey = sendingRoot
        previousSendCounter = sendCounter
        sendCounter = 0
        sendingRatchetKey = newSendingKey
        sendingChain = sendingChainKey
        remoteRatchetKey = ratchetKey
        receivingChain = chain
        skippedKeys.append(pending, maxStored: configuration.maxStored)
        return plaintext
    }

    /// (CKr, mk) = KDF_CK(CKr); Nr += 1 on `chain`, then opens `message` with mk.
    private static func openNext(
        _ message: RatchetMessage, chain: inout ReceiverChain, associatedData: [UInt8], contentType: MessagePadding.ContentType
    ) throws(SessionError) -> [UInt8] {
        try withSecretScratch(MessageKey.byteCount) { (messageKey: UnsafeMutableRawBufferPointer) throws(SessionError) in
            chain.chainKey = chain.chainKey.advance(writingMessageKeyInto: messageKey)
            chain.counter += 1
            return try open(message, messageKey: UnsafeRawBufferPointer(messageKey), associatedData: associatedData, contentType: contentType)
        }
    }

    /// Opens `message`'s ciphertext under MSGKEYS(mk) with aad = AD || header and unpads it,
    /// expecting `contentType`.
    private static func open(
        _ message: RatchetMessage, messageKey: UnsafeRawBufferPointer, associatedData: [UInt8],
        contentType: MessagePadding.ContentType
    ) throws(SessionError) -> [UInt8] {
        try message.buffer.withBytes { (buffer: UnsafeRawBufferPointer) throws(SessionError) in
            let bodyStart = message.start + RatchetMessage.headerByteCount
            let header = buffer.slice(message.start ..< bodyStart)
            return try withAssociatedData(associatedData, header: header) { (aad: UnsafeRawBufferPointer) throws(SessionError) in
                try MessageKeys.open(
                    buffer.slice(bodyStart ..< buffer.count), messageKey: messageKey, authenticating: aad, contentType: contentType)
            }
        }
    }

    /// Calls `body` with AD || header in a temporary buffer.
    private static func withAssociatedData<R>(
        _ associatedData: [UInt8], header: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws(SessionError) -> R
    ) throws(SessionError) -> R {
        let count = associatedData.count + header.count
        let result: Result<R, SessionError> = withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { aad in
            associatedData.withUnsafeBytes { aad.slice(0 ..< associatedData.count).copyMemory(from: $0) }
            aad.slice(associatedData.count ..< count).copyMemory(from: header)
            return Result { () throws(SessionError) -> R in try body(UnsafeRawBufferPointer(aad)) }
        }
        return try result.get()
    }

    /// "A new X25519 key" of SPEC §4.
    private static func newRatchetKey(_ random: any RandomSource) throws(SessionError) -> X25519.PrivateKey {
        do { return try X25519.PrivateKey(using: random) } catch { throw SessionError.primitive(error) }
    }

    /// A redacted description: counters and public keys only.
    var description: String {
        "DoubleRatchet(DHs: \(sendingRatchetKey.publicKey.hexString), DHr: \(remoteRatchetKey?.hexString ?? "none"), "
            + "Ns: \(sendCounter), Nr: \(receiveCounter), PN: \(previousSendCounter), skipped: \(skippedKeys.count), secrets redacted)"
    }
    /// A redacted description: counters and public keys only.
    var debugDescription: String { description }
}
