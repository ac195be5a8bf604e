import SessionKitAge
import SignalPrimitives

/// Decrypts an attachment's ciphertext pushed in pieces, knowing its exact layout from the
/// pointer: the nonce, then chunk i of 64 KiB + 16 bytes (the last one shorter, final). Each
/// chunk is opened with its index and flag once complete and its content, clipped to the first
/// n bytes, goes to the output; the SHA-256 of everything is compared with the pointer's in
/// `finish`.
struct AttachmentDecoder {
    private let fileKey: AgeFileKey
    private let expectedDigest: [UInt8]
    private let contentLength: UInt64
    private let expectedLength: UInt64
    private let chunkCount: UInt64
    private let lastChunkLength: Int
    private var received: UInt64 = 0
    private var nonce: [UInt8] = []
    private var cipher: AgePayloadCipher?
    private var index: UInt64 = 0
    private var released: UInt64 = 0
    private var pending: [UInt8] = []
    private var opened: [UInt8]
    /// The most chunks opened together on all cores (1: one by one; `AgeParallelism`).
    var batchChunks = 1 {
        didSet { batch = [] }
    }
    private var batch: [UInt8] = []
    private var digest = SHA256()
    /// Whether `finish` checks the digest (false where the caller checked it already).
    private let checksDigest: Bool

    /// A decoder for the attachment `pointer` names; `checksDigest` false only where the whole
    /// ciphertext's SHA-256 was compared with the pointer's already.
    /// - Throws: `SessionError.invalidMessage` when its padded or ciphertext length would
    ///   exceed 2^64 − 1.
    init(pointer: AttachmentPointer, checksDigest: Bool = true) throws(SessionError) {
        self.checksDigest = checksDigest
        fileKey = pointer.fileKey
        expectedDigest = pointer.ciphertextDigest
        contentLength = pointer.contentLength
        let padded = try pointer.paddedLength()
        expectedLength = try pointer.ciphertextLength()
        chunkCount = AgePayloadCipher.chunkCount(plaintextCount: padded)
        lastChunkLength = Int(padded - (chunkCount - 1) * UInt64(AgePayloadCipher.chunkByteCount)) + ChaCha20Poly1305.tagByteCount
        pending.reserveCapacity(AgePayloadCipher.sealedChunkByteCount)
        opened = [UInt8](repeating: 0, count: AgePayloadCipher.chunkByteCount)
    }

    /// The ciphertext length of chunk `index`.
    private func sealedLength(of index: UInt64) -> Int {
        index == chunkCount - 1 ? lastChunkLength : AgePayloadCipher.sealedChunkByteCount
    }

    /// Adds ciphertext; verified content goes to `output`.
    /// - Throws: `SessionError.invalidMessage` for ciphertext beyond the expected length or a
    ///   chunk that does not verify; `SessionError.primitive`.
    mutating func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) -> Void) throws(SessionError) {
        guard UInt64(input.count) <= expectedLength - received else { throw .invalidMessage }
        received += UInt64(input.count)
        if checksDigest { digest.update(bytes: input) }
        var offset = 0
        while offset < input.count {
            if cipher == nil {
                let take = min(AgePayloadCipher.nonceByteCount - nonce.count, input.count - offset)
                nonce.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset ..< offset + take]))
                offset += take
                if nonce.count == AgePayloadCipher.nonceByteCount {
                    do { cipher = try AgePayloadCipher(fileKey: fileKey, nonce: nonce) } catch { throw AttachmentEncryptor.sessionError(error) }
                }
                continue
            }
            // Several whole non-final chunks in the input: opened together on all cores. A
            // chunk that does not verify is left to the sequential path below, for its error.
            let whole = min((input.count - offset) / AgePayloadCipher.sealedChunkByteCount, batchChunks, Int(clamping: chunkCount - 1 - index))
            if pending.isEmpty, whole > 1, let cipher {
                let chunks = UnsafeRawBufferPointer(rebasing: input[offset ..< offset + whole * AgePayloadCipher.sealedChunkByteCount])
                let done = openBatch(chunks, count: whole, cipher, output)
                offset += done * AgePayloadCipher.sealedChunkByteCount
                if done == whole { continue }
            }
            let needed = sealedLength(of: index)
            // A whole chunk in the input: opened in place, not copied.
            if pending.isEmpty, input.count - offset >= needed {
                try openChunk(UnsafeRawBufferPointer(rebasing: input[offset ..< offset + needed]), output)
                offset += needed
                continue
            }
            let take = min(needed - pending.count, input.count - offset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset ..< offset + take]))
            offset += take
            if pending.count == needed {
                // A second reference to the buffer (no copy) lets `openChunk` mutate `self`.
                var chunk = pending
                try chunk.withBytes { (c: UnsafeRawBufferPointer) throws(SessionError) in try openChunk(c, output) }
                chunk = []
                pending.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Opens `count` whole non-final chunks of `ciphertext` on all cores, releases the visible
    /// content of those before the first failure in one piece and returns how many that is.
    /// The batch buffer is wiped before returning.
    private mutating func openBatch(_ ciphertext: UnsafeRawBufferPointer, count: Int, _ cipher: AgePayloadCipher, _ output: (UnsafeRawBufferPointer) -> Void) -> Int {
        let chunk = AgePayloadCipher.chunkByteCount
        if batch.isEmpty { batch = [UInt8](repeating: 0, count: batchChunks * chunk) }
        let first = index
        let done = batch.withUnsafeMutableBytes { cipher.openNonFinalChunks(ciphertext, count: count, firstIndex: first, into: $0) }
        let visible = Int(min(UInt64(done * chunk), contentLength - min(released, contentLength)))
        if visible > 0 { batch.withUnsafeBytes { output(UnsafeRawBufferPointer(rebasing: $0[0 ..< visible])) } }
        batch.withUnsafeMutableBytes { SecureMemory.zero(UnsafeMutableRawBufferPointer(rebasing: $0[0 ..< count * chunk])) }
        released += UInt64(done * chunk)
        index += UInt64(done)
        return done
    }

    private mutating func openChunk(_ ciphertext: UnsafeRawBufferPointer, _ output: (UnsafeRawBufferPointer) -> Void) throws(SessionError) {
        guard let cipher else { throw .invalidMessage }
        let final = index == chunkCount - 1
        let count: Int?
        do {
            count = try opened.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(AgeError) in
                try cipher.open(ciphertext, index: index, final: final, into: out)
            }
        } catch {
            throw AttachmentEncryptor.sessionError(error)
        }
        guard let count else { throw .invalidMessage }
        let visible = Int(min(UInt64(count), contentLength - min(released, contentLength)))
        if visible > 0 {
            opened.withUnsafeBytes { output(UnsafeRawBufferPointer(rebasing: $0[0 ..< visible])) }
        }
        released += UInt64(count)
        index += 1
    }

    /// Ends the ciphertext: it must have had the expected length and SHA-256.
    /// - Throws: `SessionError.invalidMessage` otherwise.
    mutating func finish() throws(SessionError) {
        guard received == expectedLength, index == chunkCount else { throw .invalidMessage }
        guard checksDigest else { return }
        var actual = digest.finalize()
        defer { SecureMemory.zero(&actual) }
        guard ConstantTime.equals(actual, expectedDigest) else { throw .invalidMessage }
    }
}
