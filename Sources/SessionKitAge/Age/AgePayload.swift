import SignalPrimitives

/// The STREAM payload of age v1: 64 KiB chunks sealed with ChaCha20-Poly1305 under the payload
/// key, each with the nonce `u88(counter) || flag` (flag 0x01 on the final chunk only).
///
///     payload key = HKDF-SHA-256(ikm = file key, salt = 16-byte nonce, info = "payload")
///
/// The final chunk may be shorter than 64 KiB but is empty only when the whole payload is.
/// SessionKit's attachments (SPEC §10) are this payload without a header.
package struct AgePayloadCipher {
    /// Plaintext bytes per chunk.
    package static let chunkByteCount = 64 * 1024
    /// Ciphertext bytes of a full chunk (plaintext and tag).
    package static let sealedChunkByteCount = chunkByteCount + ChaCha20Poly1305.tagByteCount
    /// The length of the nonce at the start of a payload.
    package static let nonceByteCount = 16

    private let key: SymmetricKey

    /// The cipher of the payload that starts with `nonce` (16 bytes), for `fileKey`.
    package init(fileKey: AgeFileKey, nonce: [UInt8]) throws(AgeError) {
        key = try AgeKeyWrap.derive(from: fileKey, salt: nonce, info: "payload")
    }

    /// The number of chunks of a payload of `plaintextCount` bytes (at least one).
    package static func chunkCount(plaintextCount: UInt64) -> UInt64 {
        plaintextCount == 0 ? 1 : (plaintextCount - 1) / UInt64(chunkByteCount) + 1
    }

    /// The length of the payload (nonce included) of `plaintextCount` bytes, or `nil` when it
    /// exceeds 2^64 − 1.
    package static func payloadByteCount(plaintextCount: UInt64) -> UInt64? {
        let tags = chunkCount(plaintextCount: plaintextCount).multipliedReportingOverflow(by: UInt64(ChaCha20Poly1305.tagByteCount))
        guard !tags.overflow else { return nil }
        let body = plaintextCount.addingReportingOverflow(tags.partialValue)
        guard !body.overflow else { return nil }
        let total = body.partialValue.addingReportingOverflow(UInt64(nonceByteCount))
        return total.overflow ? nil : total.partialValue
    }

    /// The 12-byte nonce of chunk `index`.
    private static func withNonce<R>(index: UInt64, final: Bool, _ body: (UnsafeRawBufferPointer) throws(CryptoError) -> R) throws(CryptoError) -> R {
        var nonce: (UInt64, UInt32) = (0, 0)
        return try withUnsafeMutableBytes(of: &nonce) { (bytes: UnsafeMutableRawBufferPointer) throws(CryptoError) -> R in
            for byte in 0 ..< 8 { bytes[3 + byte] = UInt8(truncatingIfNeeded: index >> UInt64(56 - 8 * byte)) }
            bytes[11] = final ? 1 : 0
            return try body(UnsafeRawBufferPointer(rebasing: bytes[0 ..< 12]))
        }
    }

    /// Seals chunk `index` (at most 64 KiB) into `output`; returns the bytes written.
    package func seal(_ plaintext: UnsafeRawBufferPointer, index: UInt64, final: Bool, into output: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int {
        do {
            return try key.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws(CryptoError) in
                try Self.withNonce(index: index, final: final) { (n: UnsafeRawBufferPointer) throws(CryptoError) in
                    try ChaCha20Poly1305.seal(plaintext, key: k, nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0), into: output)
                }
            }
        } catch {
            throw .primitive(error)
        }
    }

    /// Opens chunk `index` into `output`; returns the plaintext length, or `nil` when the tag
    /// does not verify with that index and flag (nothing is written then).
    package func open(_ ciphertext: UnsafeRawBufferPointer, index: UInt64, final: Bool, into output: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int? {
        do {
            return try key.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws(CryptoError) in
                try Self.withNonce(index: index, final: final) { (n: UnsafeRawBufferPointer) throws(CryptoError) in
                    try ChaCha20Poly1305.open(ciphertext, key: k, nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0), into: output)
                }
            }
        } catch .authenticationFailure {
            return nil
        } catch {
            throw .primitive(error)
        }
    }

    /// Opens `count` whole sealed chunks of `ciphertext` as the non-final chunks `firstIndex`,
    /// `firstIndex + 1`, … on all cores (`AgeParallelism.forEachIndex`), each into its
    /// `chunkByteCount` bytes of `plaintext`; returns how many verify before the first that
    /// does not (the plaintext from that chunk on must never be released).
    package func openNonFinalChunks(
        _ ciphertext: UnsafeRawBufferPointer, count: Int, firstIndex: UInt64, into plaintext: UnsafeMutableRawBufferPointer
    ) -> Int {
        let chunk = Self.chunkByteCount, sealedChunk = Self.sealedChunkByteCount
        let cipher = self
        var verified = [Bool](repeating: false, count: count)
        verified.withUnsafeMutableBufferPointer { (results: inout UnsafeMutableBufferPointer<Bool>) in
            let input = SharedBatchMemory(value: ciphertext), output = SharedBatchMemory(value: plaintext)
            let results = SharedBatchMemory(value: results)
            AgeParallelism.forEachIndex(count) { (i: Int) in
                let opened = try? cipher.open(
                    UnsafeRawBufferPointer(rebasing: input.value[i * sealedChunk ..< (i + 1) * sealedChunk]), index: firstIndex + UInt64(i), final: false,
                    into: UnsafeMutableRawBufferPointer(rebasing: output.value[i * chunk ..< (i + 1) * chunk]))
                results.value[i] = opened == chunk
            }
        }
        return verified.firstIndex(of: false) ?? count
    }
}

/// Encrypts a payload pushed in pieces of any size. A full chunk is sealed only once more
/// plaintext arrives (until then it may be the final one), so memory stays at two chunks.
///
/// With `batchChunks` > 1 (the file paths, `AgeParallelism`), the whole chunks of an input
/// that are followed by more input are sealed on all cores, up to `batchChunks` at a time, and
/// handed out together; the ciphertext is the same, memory grows by one batch.
package struct AgePayloadEncoder {
    private let cipher: AgePayloadCipher
    /// The most chunks sealed or opened together (1: one by one). Set before the first update.
    package var batchChunks: Int {
        didSet { batch = [] }
    }
    private var index: UInt64 = 0
    private var pending: [UInt8] = []
    private var sealed: [UInt8]
    private var batch: [UInt8] = []
    package private(set) var isFinished = false

    package init(cipher: AgePayloadCipher, batchChunks: Int = 1) {
        self.cipher = cipher
        self.batchChunks = batchChunks
        pending.reserveCapacity(AgePayloadCipher.chunkByteCount)
        sealed = [UInt8](repeating: 0, count: AgePayloadCipher.sealedChunkByteCount)
    }

    /// Seals the whole chunks of `plaintext` (`count` of them, none final) on all cores and
    /// hands their ciphertext to `output` in one piece. On a failure the chunks before the
    /// failing one are handed out, then the error is thrown, as the sequential path does.
    private mutating func sealBatch(_ plaintext: UnsafeRawBufferPointer, count: Int, _ output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        let chunk = AgePayloadCipher.chunkByteCount, sealedChunk = AgePayloadCipher.sealedChunkByteCount
        if batch.isEmpty { batch = [UInt8](repeating: 0, count: batchChunks * sealedChunk) }
        let cipher = cipher, first = index
        var failures = [AgeError?](repeating: nil, count: count)
        batch.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
            failures.withUnsafeMutableBufferPointer { (failed: inout UnsafeMutableBufferPointer<AgeError?>) in
                let input = SharedBatchMemory(value: plaintext), output = SharedBatchMemory(value: out)
                let failed = SharedBatchMemory(value: failed)
                AgeParallelism.forEachIndex(count) { (i: Int) in
                    do throws(AgeError) {
                        _ = try cipher.seal(
                            UnsafeRawBufferPointer(rebasing: input.value[i * chunk ..< (i + 1) * chunk]), index: first + UInt64(i), final: false,
                            into: UnsafeMutableRawBufferPointer(rebasing: output.value[i * sealedChunk ..< (i + 1) * sealedChunk]))
                    } catch {
                        failed.value[i] = error
                    }
                }
            }
        }
        let done = failures.firstIndex(where: { $0 != nil }) ?? count
        if done > 0 { batch.withUnsafeBytes { output(UnsafeRawBufferPointer(rebasing: $0[0 ..< done * sealedChunk])) } }
        index += UInt64(done)
        if done < count, let failure = failures[done] { throw failure }
    }

    /// Seals `plaintext` as the next chunk and hands the ciphertext to `output`.
    private mutating func seal(_ plaintext: UnsafeRawBufferPointer, final: Bool, _ output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        guard index < UInt64.max else { throw .payload("the chunk counter is exhausted") }
        let count = try sealed.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(AgeError) in
            try cipher.seal(plaintext, index: index, final: final, into: out)
        }
        sealed.withUnsafeBytes { output(UnsafeRawBufferPointer(rebasing: $0[0 ..< count])) }
        index += 1
    }

    /// Seals the pending chunk and hands the ciphertext to `output`.
    private mutating func flush(final: Bool, _ output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        // A second reference to the buffer (no copy) lets `seal` mutate `self` while reading it.
        var chunk = pending
        try chunk.withBytes { (p: UnsafeRawBufferPointer) throws(AgeError) in try seal(p, final: final, output) }
        chunk = []
        SecureMemory.zero(&pending)
        pending.removeAll(keepingCapacity: true)
    }

    /// Adds plaintext; ciphertext of whole chunks that are known not to be final goes to `output`.
    /// - Throws: `AgeError.streamClosed` after `finish`.
    package mutating func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        guard !isFinished else { throw .streamClosed }
        var offset = 0
        while offset < input.count {
            if pending.count == AgePayloadCipher.chunkByteCount { try flush(final: false, output) }
            // Several whole chunks of the input with more after them: sealed together on all
            // cores (the counter must not run out inside the batch).
            let whole = min((input.count - offset - 1) / AgePayloadCipher.chunkByteCount, batchChunks)
            if pending.isEmpty, whole > 1, UInt64.max - index > UInt64(whole) {
                try sealBatch(UnsafeRawBufferPointer(rebasing: input[offset ..< offset + whole * AgePayloadCipher.chunkByteCount]), count: whole, output)
                offset += whole * AgePayloadCipher.chunkByteCount
                continue
            }
            // A whole chunk of the input with more after it: sealed in place, not copied.
            if pending.isEmpty, input.count - offset > AgePayloadCipher.chunkByteCount {
                try seal(UnsafeRawBufferPointer(rebasing: input[offset ..< offset + AgePayloadCipher.chunkByteCount]), final: false, output)
                offset += AgePayloadCipher.chunkByteCount
                continue
            }
            let take = min(AgePayloadCipher.chunkByteCount - pending.count, input.count - offset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset ..< offset + take]))
            offset += take
        }
    }

    /// Seals the final chunk (empty only when no plaintext was added).
    /// - Throws: `AgeError.streamClosed` when called twice.
    package mutating func finish(output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        guard !isFinished else { throw .streamClosed }
        try flush(final: true, output)
        isFinished = true
        SecureMemory.zero(&sealed)
        SecureMemory.zero(&batch)
    }
}

/// Decrypts a payload (after its nonce) pushed in pieces of any size, releasing each chunk's
/// plaintext only after its tag verified.
///
/// A full chunk is held until more input arrives or the input ends, since only then is it
/// known whether it should be final: a full chunk followed by more data must open as a
/// non-final chunk; the last chunk must open as final. What happens at the edges, as C2SP/CCTV
/// expects of a streaming reader:
/// - a full chunk that opens only as final but is followed by more data: its plaintext is
///   released (it is authentic), then "data after the final chunk" fails the payload;
/// - at the end, a full chunk that opens only as non-final: released, then "missing final
///   chunk" (the file was truncated at a chunk boundary);
/// - an empty final chunk after other chunks, an input that ends without any chunk or in the
///   middle of a tag: payload failures, nothing more released.
///
/// With `batchChunks` > 1 (the file paths, `AgeParallelism`), the whole chunks of an input
/// that are followed by more input are opened as non-final on all cores, up to `batchChunks` at
/// a time; the chunks before the first one that does not verify are released together, the
/// plaintext of that chunk and of every later one in the batch is wiped, never released, and
/// the failing chunk goes through the sequential path above (same release, same error).
package struct AgePayloadDecoder {
    private let cipher: AgePayloadCipher
    /// The most chunks sealed or opened together (1: one by one). Set before the first update.
    package var batchChunks: Int {
        didSet { batch = [] }
    }
    private var index: UInt64 = 0
    private var pending: [UInt8] = []
    private var opened: [UInt8]
    private var batch: [UInt8] = []
    private var failure: AgeError?
    package private(set) var isFinished = false

    package init(cipher: AgePayloadCipher, batchChunks: Int = 1) {
        self.cipher = cipher
        self.batchChunks = batchChunks
        pending.reserveCapacity(AgePayloadCipher.sealedChunkByteCount)
        opened = [UInt8](repeating: 0, count: AgePayloadCipher.chunkByteCount)
    }

    /// Opens the whole chunks of `ciphertext` (`count` of them) as non-final on all cores,
    /// hands the plaintext of those before the first failure to `output` in one piece and
    /// returns how many that is. The batch buffer is wiped before returning.
    private mutating func openBatch(_ ciphertext: UnsafeRawBufferPointer, count: Int, _ output: (UnsafeRawBufferPointer) -> Void) -> Int {
        let chunk = AgePayloadCipher.chunkByteCount
        if batch.isEmpty { batch = [UInt8](repeating: 0, count: batchChunks * chunk) }
        let (cipher, first) = (cipher, index)
        let done = batch.withUnsafeMutableBytes { cipher.openNonFinalChunks(ciphertext, count: count, firstIndex: first, into: $0) }
        if done > 0 { batch.withUnsafeBytes { output(UnsafeRawBufferPointer(rebasing: $0[0 ..< done * chunk])) } }
        batch.withUnsafeMutableBytes { SecureMemory.zero(UnsafeMutableRawBufferPointer(rebasing: $0[0 ..< count * chunk])) }
        index += UInt64(done)
        return done
    }

    /// Opens `ciphertext` as the next chunk with `final`; on success hands the plaintext to
    /// `output`.
    private mutating func open(_ ciphertext: UnsafeRawBufferPointer, final: Bool, _ output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) -> Bool {
        let count = try opened.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(AgeError) in
            try cipher.open(ciphertext, index: index, final: final, into: out)
        }
        guard let count else { return false }
        opened.withUnsafeBytes { output(UnsafeRawBufferPointer(rebasing: $0[0 ..< count])) }
        guard index < UInt64.max else { throw .payload("the chunk counter is exhausted") }
        index += 1
        return true
    }

    /// Opens the pending chunk with `final`; on success hands the plaintext to `output`.
    private mutating func open(final: Bool, _ output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) -> Bool {
        // A second reference to the buffer (no copy) lets `open` mutate `self` while reading it;
        // dropped before `removeAll` so the buffer is reused.
        var chunk = pending
        let done = try chunk.withBytes { (c: UnsafeRawBufferPointer) throws(AgeError) in try open(c, final: final, output) }
        chunk = []
        if done { pending.removeAll(keepingCapacity: true) }
        return done
    }

    private mutating func fail(_ error: AgeError) -> AgeError {
        failure = error
        SecureMemory.zero(&opened)
        return error
    }

    /// Adds ciphertext; plaintext of chunks that verified goes to `output`.
    /// - Throws: `AgeError.payload` for a chunk that does not verify or data after the final
    ///   chunk, and again on every later call; `AgeError.streamClosed` after `finish`.
    package mutating func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        if let failure { throw failure }
        guard !isFinished else { throw .streamClosed }
        var offset = 0
        while offset < input.count {
            if pending.count == AgePayloadCipher.sealedChunkByteCount {
                // More data follows this full chunk: it must not be final.
                if try open(final: false, output) { continue }
                if try open(final: true, output) { throw fail(.payload("data after the final chunk")) }
                throw fail(.payload("chunk \(index) does not verify"))
            }
            // Several whole chunks of the input with more after them: opened together on all
            // cores (the counter must not run out inside the batch). A chunk that does not
            // verify is left to the sequential path below, for the same error.
            let whole = min((input.count - offset - 1) / AgePayloadCipher.sealedChunkByteCount, batchChunks)
            if pending.isEmpty, whole > 1, UInt64.max - index > UInt64(whole) {
                let chunks = UnsafeRawBufferPointer(rebasing: input[offset ..< offset + whole * AgePayloadCipher.sealedChunkByteCount])
                let done = openBatch(chunks, count: whole, output)
                offset += done * AgePayloadCipher.sealedChunkByteCount
                if done == whole { continue }
            }
            // A whole chunk of the input with more after it: opened in place, not copied.
            if pending.isEmpty, input.count - offset > AgePayloadCipher.sealedChunkByteCount {
                let chunk = UnsafeRawBufferPointer(rebasing: input[offset ..< offset + AgePayloadCipher.sealedChunkByteCount])
                if try open(chunk, final: false, output) {
                    offset += AgePayloadCipher.sealedChunkByteCount
                    continue
                }
                if try open(chunk, final: true, output) { throw fail(.payload("data after the final chunk")) }
                throw fail(.payload("chunk \(index) does not verify"))
            }
            let take = min(AgePayloadCipher.sealedChunkByteCount - pending.count, input.count - offset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset ..< offset + take]))
            offset += take
        }
    }

    /// Ends the input: the held chunk must be the final one.
    /// - Throws: `AgeError.payload` for a missing, empty, short or unverifiable final chunk.
    package mutating func finish(output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        if let failure { throw failure }
        guard !isFinished else { throw .streamClosed }
        if pending.isEmpty {
            throw fail(.payload(index == 0 ? "the payload has no chunk" : "the payload ends without a final chunk"))
        }
        if pending.count < ChaCha20Poly1305.tagByteCount { throw fail(.payload("the last chunk is shorter than a tag")) }
        if pending.count == ChaCha20Poly1305.tagByteCount, index > 0 {
            throw fail(.payload("the final chunk is empty but the payload is not"))
        }
        if try open(final: true, output) {
            isFinished = true
            SecureMemory.zero(&opened)
            SecureMemory.zero(&batch)
            return
        }
        if pending.count == AgePayloadCipher.sealedChunkByteCount, try open(final: false, output) {
            throw fail(.payload("the payload ends without a final chunk"))
        }
        throw fail(.payload("chunk \(index) does not verify"))
    }
}
