#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SessionKitAge
import SignalPrimitives

/// Attachments (SPEC §10): photos, voice notes and files sent as age v1 payloads, outside the
/// message stream. The sender encrypts the content once and uploads the ciphertext anywhere
/// (the server sees only its length, rounded up); the message carries an `AttachmentPointer`
/// (the key, the ciphertext's SHA-256 and the content length) to every recipient.
///
///     padded(n)  = the smallest b_k ≥ n, b_0 = 512, b_(k+1) = b_k + max(1, ⌊b_k / 20⌋)
///     ciphertext = nonce (16) || ChaCha20-Poly1305 STREAM chunks of 64 KiB over
///                  content || zero bytes up to padded(n)   (age v1's payload, no header)
///     pointer    = 0x28 || file_key (16) || SHA-256(ciphertext) (32) || u64(n)
///
/// Every way to encrypt (`encrypt(_:)`, `encrypt(contentsOf:to:)`, `encrypt(_:to:)` for an
/// `AsyncSequence`, `AttachmentEncryptor` for pieces) and to decrypt (`decrypt(_:pointer:)`,
/// `decrypt(contentsOf:pointer:to:)`, `decryptedChunks(of:pointer:)`, `AttachmentReader` for
/// ranges) keeps memory to a few 64 KiB chunks, except the `Data` forms, which hold the whole
/// attachment. A receiver releases only the first n bytes, never a chunk whose tag failed; the
/// whole-file forms release nothing unless the length, every chunk and the digest are right.
///
/// ChaCha20-Poly1305 is not key-committing: the digest identifies the ciphertext, not the
/// content. Send one pointer to every member of a group (one key-committed sender-key message),
/// so that all of them open the same file with the same key.
public enum Attachment {
    /// The smallest padded length, b_0.
    public static let minimumPaddedLength: UInt64 = 512

    /// padded(n): the smallest b_k ≥ `contentLength` (b_0 = 512, b_(k+1) = b_k + max(1, ⌊b_k / 20⌋)),
    /// about 5 % steps like Signal's attachment buckets.
    /// - Throws: `SessionError.invalidMessage` when padded(n) would exceed 2^64 − 1.
    public static func paddedLength(forContentLength contentLength: UInt64) throws(SessionError) -> UInt64 {
        var bucket = minimumPaddedLength
        while bucket < contentLength {
            let (next, overflow) = bucket.addingReportingOverflow(max(1, bucket / 20))
            guard !overflow else { throw .invalidMessage }
            bucket = next
        }
        return bucket
    }

    /// The exact ciphertext length of an attachment of `contentLength` bytes: the nonce, the
    /// padded content and one 16-byte tag per 64 KiB chunk.
    /// - Throws: `SessionError.invalidMessage` when it would exceed 2^64 − 1.
    public static func ciphertextLength(forContentLength contentLength: UInt64) throws(SessionError) -> UInt64 {
        guard let length = AgePayloadCipher.payloadByteCount(plaintextCount: try paddedLength(forContentLength: contentLength)) else {
            throw .invalidMessage
        }
        return length
    }

    /// Encrypts `content` with a new random key and nonce from `random` (the system CSPRNG by
    /// default; pass another source only for tests).
    /// - Throws: `SessionError.invalidMessage` for content too long to pad (never in practice),
    ///   `SessionError.primitive` when libsodium is unusable.
    public static func encrypt(_ content: Data, using random: any RandomSource = SystemRandomSource()) throws(SessionError) -> EncryptedAttachment {
        let encryptor = try AttachmentEncryptor(using: random)
        var ciphertext = Data()
        ciphertext.reserveCapacity(Int(clamping: (try? ciphertextLength(forContentLength: UInt64(content.count))) ?? 0))
        try content.withBytes { (bytes: UnsafeRawBufferPointer) throws(SessionError) in
            try encryptor.update(bytes) { ciphertext.append(contentsOf: $0) }
        }
        let pointer = try encryptor.finish { ciphertext.append(contentsOf: $0) }
        return EncryptedAttachment(ciphertext: ciphertext, pointer: pointer)
    }

    /// Encrypts the file at `source` into a new file at `destination` (which appears only when
    /// complete: written to a temporary file, synced with `fsync` and renamed, replacing any
    /// file there) and returns the pointer.
    ///
    /// Threading: the call blocks until the file is written. For a file of 4 MiB or more on a
    /// machine with more than one active core, the chunks of each 2 MiB piece are sealed on all
    /// cores (`DispatchQueue.concurrentPerform`) and the output is written by a serial
    /// background queue while the next piece is read; smaller files are encrypted and written
    /// on the calling thread only. The ciphertext is the same either way.
    /// - Throws: `SessionError.file` when a file cannot be read or written; as `encrypt(_:using:)`.
    public static func encrypt(contentsOf source: URL, to destination: URL,
                               using random: any RandomSource = SystemRandomSource()) throws(SessionError) -> AttachmentPointer {
        try encrypt(contentsOf: source, to: destination, encryptor: AttachmentEncryptor(using: random), parallelism: .automatic)
    }

    /// `encrypt(contentsOf:to:using:)` with a given encryptor (new, nothing pushed yet) and
    /// parallelism.
    static func encrypt(contentsOf source: URL, to destination: URL, encryptor: AttachmentEncryptor,
                        parallelism: AgeParallelism) throws(SessionError) -> AttachmentPointer {
        var pointer: AttachmentPointer?
        try FilePipe.run(
            from: source, to: destination, unit: AgePayloadCipher.chunkByteCount, parallelism: parallelism, fileError: { SessionError.file($0) }
        ) { (_: UInt64, batchChunks: Int) throws(SessionError) in
            encryptor.batchChunks = batchChunks
            return FilePipe.Codec(
                update: { (piece: UnsafeRawBufferPointer, write: (UnsafeRawBufferPointer) -> Void) throws(SessionError) in
                    try encryptor.update(piece, output: write)
                },
                finish: { (write: (UnsafeRawBufferPointer) -> Void) throws(SessionError) in pointer = try encryptor.finish(output: write) })
        }
        guard let pointer else { throw .invalidMessage }
        return pointer
    }

    /// Encrypts content arriving as an `AsyncSequence` of byte chunks (any sizes) into a new
    /// file at `destination` (which appears only when complete) and returns the pointer.
    /// Memory stays at a few chunks whatever the content length.
    /// - Throws: the sequence's own error, unchanged; `SessionError.file` when the file cannot
    ///   be written; `SessionError.cancelled` when the task is cancelled (nothing is left at
    ///   `destination`).
    public static func encrypt<Content: AsyncSequence>(
        _ content: Content, to destination: URL, using random: any RandomSource = SystemRandomSource()
    ) async throws -> AttachmentPointer where Content.Element: ContiguousBytes {
        let output: AtomicFileWriter
        do { output = try AtomicFileWriter(destination) } catch { throw SessionError.file(error.description) }
        let writer = FileSink(output)
        let pointer = try await encrypt(content, using: random) { (bytes: Data) in
            bytes.withUnsafeBytes { writer.write($0) }
            try writer.check()
        }
        do { try output.commit() } catch { throw SessionError.file(error.description) }
        return pointer
    }

    /// Encrypts content arriving as an `AsyncSequence` of byte chunks, handing the ciphertext
    /// to `output` as it is produced (whole chunks; for an upload stream) and returning the
    /// pointer once the sequence ends. Memory stays at a few chunks.
    /// - Throws: the sequence's or `output`'s own error, unchanged; `SessionError.cancelled`
    ///   when the task is cancelled.
    public static func encrypt<Content: AsyncSequence>(
        _ content: Content, using random: any RandomSource = SystemRandomSource(), output: (Data) async throws -> Void
    ) async throws -> AttachmentPointer where Content.Element: ContiguousBytes {
        let encryptor = try AttachmentEncryptor(using: random)
        var pending = Data()
        for try await piece in content {
            if Task.isCancelled { throw SessionError.cancelled }
            // Untyped: `ContiguousBytes.withUnsafeBytes` rethrows `any Error`.
            let result: Result<Void, SessionError> = piece.withUnsafeBytes { bytes in
                Result { () throws(SessionError) in try encryptor.update(bytes) { pending.append(contentsOf: $0) } }
            }
            try result.get()
            if !pending.isEmpty {
                try await output(pending)
                pending = Data()
            }
        }
        // The padding may be long (about 5 % of the content): hand it out chunk by chunk.
        var tail: [Data] = []
        let pointer = try encryptor.finish { tail.append(Data($0)) }
        for piece in tail { try await output(piece) }
        return pointer
    }

    /// Decrypts a whole attachment held in memory. Nothing is returned unless the ciphertext
    /// has the exact length for the pointer's content length, its SHA-256 is the pointer's and
    /// every chunk verifies; then the first n bytes.
    /// - Throws: `SessionError.invalidMessage` for any of those failures.
    public static func decrypt(_ ciphertext: Data, pointer: AttachmentPointer) throws(SessionError) -> Data {
        guard UInt64(ciphertext.count) == (try ciphertextLength(forContentLength: pointer.contentLength)) else { throw .invalidMessage }
        // The digest first: a wrong ciphertext is refused before any decryption.
        var digest = ciphertext.withUnsafeBytes { SHA256.hash(bytes: $0) }
        defer { SecureMemory.zero(&digest) }
        guard ConstantTime.equals(digest, pointer.ciphertextDigest) else { throw .invalidMessage }
        var decoder = try AttachmentDecoder(pointer: pointer, checksDigest: false)
        var content = Data()
        content.reserveCapacity(Int(clamping: pointer.contentLength))
        try ciphertext.withBytes { (bytes: UnsafeRawBufferPointer) throws(SessionError) in
            try decoder.update(bytes) { content.append(contentsOf: $0) }
        }
        try decoder.finish()
        return content
    }

    /// Decrypts the attachment file at `source` into a new file at `destination`, in constant
    /// memory (a few MiB). The content goes to a temporary file in the destination's folder,
    /// synced with `fsync` and renamed to `destination` (replacing any file there) only after
    /// the final chunk verified and the ciphertext's SHA-256 matched the pointer; on any
    /// failure it is removed and `destination` is untouched. Before it starts, the stale partial
    /// files a dead process left for `destination` are removed (see
    /// `removeStalePartialFiles(in:olderThan:)`).
    ///
    /// Threading: the call blocks until the file is written. For a file of 4 MiB or more on a
    /// machine with more than one active core, the chunks of each 2 MiB piece are opened on all
    /// cores (`DispatchQueue.concurrentPerform`) and the content is written (to the temporary
    /// file) by a serial background queue while the next piece is read; smaller files are
    /// decrypted and written on the calling thread only. The result and the errors are the
    /// same either way.
    /// - Throws: `SessionError.invalidMessage` for a wrong length, a chunk that does not
    ///   verify or a wrong digest; `SessionError.file` when a file cannot be read or written.
    public static func decrypt(contentsOf source: URL, pointer: AttachmentPointer, to destination: URL) throws(SessionError) {
        try decrypt(contentsOf: source, pointer: pointer, to: destination, parallelism: .automatic)
    }

    /// Removes the partial files that attachment decryptions (and encryptions) to files in
    /// `folder` left behind when their process died: `decrypt(contentsOf:pointer:to:)` writes
    /// the content to a temporary `.<name>.partial-<hex>` file next to the destination and
    /// renames it only at the end. Call it at launch for the folders the app decrypts into;
    /// each file call also removes its own destination's stale partial files when it starts
    /// (after 15 minutes).
    ///
    /// A partial file is removed only when it is a regular file of this user, was not modified
    /// for `minimumAge`, and no process holds it: every writer holds an exclusive `flock` on
    /// its partial file until it is renamed or removed, and the system releases the lock of a
    /// process that died, so a decryption still running, here or in another process (an app
    /// extension), keeps its file. The age file paths (`AgeDecryptor`) write the same kind of
    /// partial file; they are removed too. Other files are never touched.
    /// - Parameter folder: the folder whose partial files are swept (not its subfolders).
    /// - Parameter minimumAge: how long a partial file must have been left unmodified (15
    ///   minutes by default; negative counts as zero).
    /// - Returns: how many files were removed.
    /// - Throws: `SessionError.file` when `folder` cannot be listed.
    @discardableResult
    public static func removeStalePartialFiles(in folder: URL, olderThan minimumAge: Duration = .seconds(15 * 60)) throws(SessionError) -> Int {
        do {
            return try PartialFiles.removeStale(in: filePath(of: folder), namePrefix: nil, minimumAge: minimumAge.components.seconds).count
        } catch {
            throw .file(error.description)
        }
    }

    /// `decrypt(contentsOf:pointer:to:)` with a given parallelism.
    static func decrypt(contentsOf source: URL, pointer: AttachmentPointer, to destination: URL, parallelism: AgeParallelism) throws(SessionError) {
        try FilePipe.run(
            from: source, to: destination, unit: AgePayloadCipher.sealedChunkByteCount, parallelism: parallelism, fileError: { SessionError.file($0) }
        ) { (length: UInt64, batchChunks: Int) throws(SessionError) in
            // A wrong length is refused before anything is decrypted or created.
            guard length == (try ciphertextLength(forContentLength: pointer.contentLength)) else { throw SessionError.invalidMessage }
            var decoder = try AttachmentDecoder(pointer: pointer)
            decoder.batchChunks = batchChunks
            return FilePipe.Codec(
                update: { (piece: UnsafeRawBufferPointer, write: (UnsafeRawBufferPointer) -> Void) throws(SessionError) in
                    try decoder.update(piece, output: write)
                },
                finish: { (_: (UnsafeRawBufferPointer) -> Void) throws(SessionError) in try decoder.finish() })
        }
    }

    /// The content of an attachment whose ciphertext arrives as an `AsyncSequence` (a
    /// download), released as it verifies: each element is the content of the chunks that one
    /// piece of ciphertext completed.
    ///
    /// **Chunks are released before the digest is known.** Every element is authentic (its
    /// chunk's tag verified under the pointer's key, in order), but the iteration throws
    /// `SessionError.invalidMessage` at the end when the ciphertext is longer or shorter than
    /// the pointer says, or its SHA-256 differs: until the sequence ends without an error, the
    /// content may be a prefix, and a wrong digest means the ciphertext was not the one the
    /// sender pointed to. Use it to show progress or play media; use
    /// `decrypt(contentsOf:pointer:to:)` when nothing may be used before the whole file is
    /// checked.
    public static func decryptedChunks<Ciphertext: AsyncSequence>(
        of ciphertext: Ciphertext, pointer: AttachmentPointer
    ) -> DecryptedAttachmentChunks<Ciphertext> where Ciphertext.Element: ContiguousBytes {
        DecryptedAttachmentChunks(base: ciphertext, pointer: pointer)
    }
}

/// An encrypted attachment held in memory: the ciphertext to upload and the pointer to send.
public struct EncryptedAttachment: Sendable {
    /// The ciphertext: nonce and STREAM chunks.
    public let ciphertext: Data
    /// The pointer for the message (it holds the key).
    public let pointer: AttachmentPointer
}

/// Collects the first error of a file written through non-throwing callbacks.
final class FileSink {
    private let writer: AtomicFileWriter
    private var failure: FileAccessError?

    init(_ writer: AtomicFileWriter) { self.writer = writer }

    /// Writes `bytes` unless an earlier write failed.
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        do throws(FileAccessError) { try writer.write(bytes) } catch { failure = error }
    }

    /// Throws the first write error.
    /// - Throws: `SessionError.file`.
    func check() throws(SessionError) {
        if let failure { throw .file(failure.description) }
    }
}
