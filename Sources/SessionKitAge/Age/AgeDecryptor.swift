#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignalPrimitives

/// Decrypts age v1 files (C2SP `age.md`) with one or more identities: `X25519`
/// (`AgeX25519Identity`), `scrypt` (`AgeScryptIdentity`) or an identity type of another
/// module (such as SessionKitMLKEM's `mlkem768x25519` identity, `AgeHybridIdentity`). Files
/// whose stanzas are all of types no identity reads fail with `AgeError.noMatch`.
///
/// `decrypt(_:)` and `decrypt(contentsOf:to:)` release nothing unless the whole file verifies;
/// `makeStream()` releases chunks as they verify (see `AgeDecryptingStream`).
///
/// The header is parsed strictly (its ABNF, canonical base64, 64-column bodies); a header with
/// an `scrypt` stanza next to any other stanza is refused whatever the identities, as `age.md`
/// requires of passphrase files. A header with more than `maximumStanzaCount` stanzas is
/// refused (`AgeError.resourceLimit`) as soon as the stanza over the limit starts.
public struct AgeDecryptor: Sendable {
    /// The most recipient stanzas a header may have: 4,096. Every stanza of a type an identity
    /// reads costs that identity a key agreement (an X25519 or ML-KEM operation), so a file with
    /// very many stanzas (a 4 MiB header holds tens of thousands of X25519 stanzas, 700,000 empty
    /// ones) would cost the reader seconds and memory for nothing. Real files have a few; the
    /// `age` tool once stopped at 20 (age.md sets no limit). `AgeEncryptor` refuses to write more.
    public static let maximumStanzaCount = 4096

    /// The identities tried, in order, on the header's stanzas.
    public let identities: [any AgeIdentity]
    /// Binary, armored, or detected from the first bytes.
    public let format: AgeInputFormat

    /// A decryptor with `identities`, reading `format`.
    public init(identities: [any AgeIdentity], format: AgeInputFormat = .automatic) {
        self.identities = identities
        self.format = format
    }

    /// A stream for one file.
    public func makeStream() -> AgeDecryptingStream {
        AgeDecryptingStream(identities: identities, format: format)
    }

    /// Decrypts a whole file; nothing is returned unless all of it verifies.
    /// - Throws: `AgeError` (`header`, `noMatch`, `headerMAC`, `payload`, `armor`,
    ///   `resourceLimit`).
    public func decrypt(_ file: Data) throws(AgeError) -> Data {
        let stream = makeStream()
        var plaintext = Data()
        try file.withBytes { (bytes: UnsafeRawBufferPointer) throws(AgeError) in
            try stream.update(bytes, releaseBytes: { plaintext.append(contentsOf: $0) })
        }
        try stream.finish(releaseBytes: { plaintext.append(contentsOf: $0) })
        return plaintext
    }

    /// Decrypts the file at `source` into a new file at `destination`, in constant memory (a
    /// few MiB). The plaintext goes to a temporary file in the destination's folder, synced
    /// with `fsync` and renamed to `destination` (replacing any file there) only after the
    /// final chunk verified; on any error it is removed and `destination` is untouched. Before
    /// it starts, the stale partial files a dead process left for `destination` are removed
    /// (see `removeStalePartialFiles(in:olderThan:)`).
    ///
    /// Threading: the call blocks until the file is written. For a binary file of 4 MiB or
    /// more on a machine with more than one active core, the payload chunks of each 2 MiB
    /// piece are opened on all cores (`DispatchQueue.concurrentPerform`) and the plaintext is
    /// written (to the temporary file) by a serial background queue while the next piece is
    /// read; an armored file of that size is decrypted on the calling thread, its output
    /// written by that queue; smaller files are decrypted and written on the calling thread
    /// only. The result and the errors are the same either way.
    /// - Throws: `AgeError` as `decrypt(_:)`; `AgeError.file` when a file cannot be read or
    ///   written.
    public func decrypt(contentsOf source: URL, to destination: URL) throws(AgeError) {
        try decrypt(contentsOf: source, to: destination, parallelism: .automatic)
    }

    /// Removes the partial files that decryptions (and encryptions) to files in `folder` left
    /// behind when their process died: `decrypt(contentsOf:to:)` writes the plaintext to a
    /// temporary `.<name>.partial-<hex>` file next to the destination and renames it only at
    /// the end. Call it at launch for the folders the app decrypts into; each file call also
    /// removes its own destination's stale partial files when it starts (after 15 minutes).
    ///
    /// A partial file is removed only when it is a regular file of this user, was not modified
    /// for `minimumAge`, and no process holds it: every writer holds an exclusive `flock` on
    /// its partial file until it is renamed or removed, and the system releases the lock of a
    /// process that died, so a decryption still running, here or in another process (an app
    /// extension), keeps its file. Attachment partial files (SessionKit's `Attachment`) are the
    /// same kind and are removed too. Other files are never touched.
    /// - Parameter folder: the folder whose partial files are swept (not its subfolders).
    /// - Parameter minimumAge: how long a partial file must have been left unmodified (15
    ///   minutes by default; negative counts as zero).
    /// - Returns: how many files were removed.
    /// - Throws: `AgeError.file` when `folder` cannot be listed.
    @discardableResult
    public static func removeStalePartialFiles(in folder: URL, olderThan minimumAge: Duration = .seconds(15 * 60)) throws(AgeError) -> Int {
        do {
            return try PartialFiles.removeStale(in: filePath(of: folder), namePrefix: nil, minimumAge: minimumAge.components.seconds).count
        } catch {
            throw .file(error.description)
        }
    }

    /// `decrypt(contentsOf:to:)` with a given parallelism.
    func decrypt(contentsOf source: URL, to destination: URL, parallelism: AgeParallelism) throws(AgeError) {
        let stream = makeStream()
        try FilePipe.run(
            from: source, to: destination, unit: AgePayloadCipher.sealedChunkByteCount, parallelism: parallelism, fileError: { AgeError.file($0) }
        ) { (_: UInt64, batchChunks: Int) throws(AgeError) in
            stream.batchChunks = batchChunks
            return FilePipe.Codec(
                update: { (piece: UnsafeRawBufferPointer, write: (UnsafeRawBufferPointer) -> Void) throws(AgeError) in
                    try stream.update(piece, releaseBytes: write)
                },
                finish: { (write: (UnsafeRawBufferPointer) -> Void) throws(AgeError) in try stream.finish(releaseBytes: write) })
        }
    }
}
