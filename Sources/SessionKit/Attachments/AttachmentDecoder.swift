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
    private var digest = SHA256()

    /// A decoder for the attachment `pointer` names.
    /// - Throws: `SessionError.invalidMessage` when its padded or ciphertext length would
    ///   exceed 2^64 − 1.
    init(pointer: AttachmentPointer) throws(SessionError) {
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
        digest.update(bytes: input)
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
            let needed = sealedLength(of: index)
            let take = min(needed - pending.count, input.count - offset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset ..< offset + take]))
            offset += take
            if pending.count == needed { try openChunk(output) }
        }
    }

    private mutating func openChunk(_ output: (UnsafeRawBufferPointer) -> Void) throws(SessionError) {
        guard let cipher else { throw .invalidMessage }
        let final = index == chunkCount - 1
        let count: Int?
        do {
            count = try pending.withBytes { (c: UnsafeRawBufferPointer) throws(AgeError) in
                try opened.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(AgeError) in
                    try cipher.open(c, index: index, final: final, into: out)
                }
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
        pending.removeAll(keepingCapacity: true)
    }

    /// Ends the ciphertext: it must have had the expected length and SHA-256.
    /// - Throws: `SessionError.invalidMessage` otherwise.
    mutating func finish() throws(SessionError) {
        guard received == expectedLength, index == chunkCount else { throw .invalidMessage }
        var actual = digest.finalize()
        defer { SecureMemory.zero(&actual) }
        guard ConstantTime.equals(actual, expectedDigest) else { throw .invalidMessage }
    }
}
