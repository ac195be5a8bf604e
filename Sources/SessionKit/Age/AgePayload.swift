import SignalPrimitives

/// The STREAM payload of age v1: 64 KiB chunks sealed with ChaCha20-Poly1305 under the payload
/// key, each with the nonce `u88(counter) || flag` (flag 0x01 on the final chunk only).
///
///     payload key = HKDF-SHA-256(ikm = file key, salt = 16-byte nonce, info = "payload")
///
/// The final chunk may be shorter than 64 KiB but is empty only when the whole payload is.
/// SessionKit's attachments (SPEC §10) are this payload without a header.
struct AgePayloadCipher {
    /// Plaintext bytes per chunk.
    static let chunkByteCount = 64 * 1024
    /// Ciphertext bytes of a full chunk (plaintext and tag).
    static let sealedChunkByteCount = chunkByteCount + ChaCha20Poly1305.tagByteCount
    /// The length of the nonce at the start of a payload.
    static let nonceByteCount = 16

    private let key: SymmetricKey

    /// The cipher of the payload that starts with `nonce` (16 bytes), for `fileKey`.
    init(fileKey: AgeFileKey, nonce: [UInt8]) throws(AgeError) {
        key = try AgeKeyWrap.derive(from: fileKey, salt: nonce, info: "payload")
    }

    /// The number of chunks of a payload of `plaintextCount` bytes (at least one).
    static func chunkCount(plaintextCount: UInt64) -> UInt64 {
        plaintextCount == 0 ? 1 : (plaintextCount - 1) / UInt64(chunkByteCount) + 1
    }

    /// The length of the payload (nonce included) of `plaintextCount` bytes, or `nil` when it
    /// exceeds 2^64 − 1.
    static func payloadByteCount(plaintextCount: UInt64) -> UInt64? {
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
    func seal(_ plaintext: UnsafeRawBufferPointer, index: UInt64, final: Bool, into output: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int {
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
    func open(_ ciphertext: UnsafeRawBufferPointer, index: UInt64, final: Bool, into output: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int? {
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
}

/// Encrypts a payload pushed in pieces of any size. A full chunk is sealed only once more
/// plaintext arrives (until then it may be the final one), so memory stays at two chunks.
struct AgePayloadEncoder {
    private let cipher: AgePayloadCipher
    private var index: UInt64 = 0
    private var pending: [UInt8] = []
    private var sealed: [UInt8]
    private(set) var isFinished = false

    init(cipher: AgePayloadCipher) {
        self.cipher = cipher
        pending.reserveCapacity(AgePayloadCipher.chunkByteCount)
        sealed = [UInt8](repeating: 0, count: AgePayloadCipher.sealedChunkByteCount)
    }

    /// Seals the pending chunk and hands the ciphertext to `output`.
    private mutating func flush(final: Bool, _ output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        guard index < UInt64.max else { throw .payload("the chunk counter is exhausted") }
        let count = try pending.withBytes { (p: UnsafeRawBufferPointer) throws(AgeError) in
            try sealed.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(AgeError) in
                try cipher.seal(p, index: index, final: final, into: out)
            }
        }
        sealed.withUnsafeBytes { output(UnsafeRawBufferPointer(rebasing: $0[0 ..< count])) }
        index += 1
        SecureMemory.zero(&pending)
        pending.removeAll(keepingCapacity: true)
    }

    /// Adds plaintext; ciphertext of whole chunks that are known not to be final goes to `output`.
    /// - Throws: `AgeError.streamClosed` after `finish`.
    mutating func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        guard !isFinished else { throw .streamClosed }
        var offset = 0
        while offset < input.count {
            if pending.count == AgePayloadCipher.chunkByteCount { try flush(final: false, output) }
            let take = min(AgePayloadCipher.chunkByteCount - pending.count, input.count - offset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset ..< offset + take]))
            offset += take
        }
    }

    /// Seals the final chunk (empty only when no plaintext was added).
    /// - Throws: `AgeError.streamClosed` when called twice.
    mutating func finish(output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        guard !isFinished else { throw .streamClosed }
        try flush(final: true, output)
        isFinished = true
        SecureMemory.zero(&sealed)
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
struct AgePayloadDecoder {
    private let cipher: AgePayloadCipher
    private var index: UInt64 = 0
    private var pending: [UInt8] = []
    private var opened: [UInt8]
    private var failure: AgeError?
    private(set) var isFinished = false

    init(cipher: AgePayloadCipher) {
        self.cipher = cipher
        pending.reserveCapacity(AgePayloadCipher.sealedChunkByteCount)
        opened = [UInt8](repeating: 0, count: AgePayloadCipher.chunkByteCount)
    }

    /// Opens the pending chunk with `final`; on success hands the plaintext to `output`.
    private mutating func open(final: Bool, _ output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) -> Bool {
        let count = try pending.withBytes { (c: UnsafeRawBufferPointer) throws(AgeError) in
            try opened.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(AgeError) in
                try cipher.open(c, index: index, final: final, into: out)
            }
        }
        guard let count else { return false }
        opened.withUnsafeBytes { output(UnsafeRawBufferPointer(rebasing: $0[0 ..< count])) }
        guard index < UInt64.max else { throw .payload("the chunk counter is exhausted") }
        index += 1
        pending.removeAll(keepingCapacity: true)
        return true
    }

    private mutating func fail(_ error: AgeError) -> AgeError {
        failure = error
        SecureMemory.zero(&opened)
        return error
    }

    /// Adds ciphertext; plaintext of chunks that verified goes to `output`.
    /// - Throws: `AgeError.payload` for a chunk that does not verify or data after the final
    ///   chunk, and again on every later call; `AgeError.streamClosed` after `finish`.
    mutating func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
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
            let take = min(AgePayloadCipher.sealedChunkByteCount - pending.count, input.count - offset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset ..< offset + take]))
            offset += take
        }
    }

    /// Ends the input: the held chunk must be the final one.
    /// - Throws: `AgeError.payload` for a missing, empty, short or unverifiable final chunk.
    mutating func finish(output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
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
            return
        }
        if pending.count == AgePayloadCipher.sealedChunkByteCount, try open(final: false, output) {
            throw fail(.payload("the payload ends without a final chunk"))
        }
        throw fail(.payload("chunk \(index) does not verify"))
    }
}
