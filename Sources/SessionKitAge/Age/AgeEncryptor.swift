#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignalPrimitives

/// Encrypts files in the age v1 format (C2SP `age.md`) to one or more recipients, as the `age`
/// and `rage` tools do: binary or ASCII-armored, whole `Data`, file to file, or streamed
/// (`makeStream()`), always in constant memory for streams and files.
///
/// ```swift
/// let identity = try AgeX25519Identity()                 // AGE-SECRET-KEY-1…
/// let encryptor = AgeEncryptor(recipients: [identity.recipient])
/// let file = try encryptor.encrypt(Data("hello".utf8))
/// let plaintext = try AgeDecryptor(identities: [identity]).decrypt(file)
/// ```
///
/// Each file gets a new random 16-byte file key and payload nonce.
public struct AgeEncryptor: Sendable {
    /// The recipients each file is encrypted to.
    public let recipients: [any AgeRecipient]
    /// Whether files are written in the ASCII armor.
    public let armored: Bool

    /// An encryptor to `recipients`, binary or `armored`.
    public init(recipients: [any AgeRecipient], armored: Bool = false) {
        self.recipients = recipients
        self.armored = armored
    }

    /// A stream for one new file (its header is computed now: scrypt recipients take their time
    /// here).
    /// - Throws: `AgeError.invalidRecipient` for no recipients, an scrypt recipient next to
    ///   others, recipients whose `labels` differ (a post-quantum recipient next to an
    ///   `X25519` one), more stanzas than `AgeDecryptor.maximumStanzaCount`, or a recipient
    ///   that cannot be used; `AgeError.primitive`.
    public func makeStream() throws(AgeError) -> AgeEncryptingStream {
        try makeStream(fileKey: AgeFileKey(), nonce: SecureRandom.bytes(AgePayloadCipher.nonceByteCount))
    }

    /// `makeStream()` with a given file key and nonce (tests and vectors only).
    @_spi(Testing) public func makeStream(fileKey: AgeFileKey, nonce: [UInt8]) throws(AgeError) -> AgeEncryptingStream {
        guard !recipients.isEmpty else { throw .invalidRecipient("no recipients") }
        if let first = recipients.first?.labels, recipients.contains(where: { $0.labels != first }) {
            throw .invalidRecipient("incompatible recipients: a post-quantum (mlkem768x25519) recipient cannot be mixed with recipients that are not")
        }
        var stanzas: [AgeStanza] = []
        for recipient in recipients { stanzas += try recipient.wrap(fileKey) }
        guard !stanzas.isEmpty else { throw .invalidRecipient("the recipients produced no stanza") }
        guard stanzas.count <= AgeDecryptor.maximumStanzaCount else {
            throw .invalidRecipient("the recipients produced \(stanzas.count) stanzas; readers refuse more than \(AgeDecryptor.maximumStanzaCount)")
        }
        if stanzas.count > 1, stanzas.contains(where: { $0.type == AgeScryptRecipient.stanzaType }) {
            throw .invalidRecipient("an scrypt recipient must be the only recipient")
        }
        let header = try AgeHeader.encode(stanzas, fileKey: fileKey)
        return AgeEncryptingStream(header: header, nonce: nonce, cipher: try AgePayloadCipher(fileKey: fileKey, nonce: nonce), armored: armored)
    }

    /// Encrypts `plaintext` into a whole age file.
    /// - Throws: as `makeStream()`.
    public func encrypt(_ plaintext: Data) throws(AgeError) -> Data {
        let stream = try makeStream()
        var file = try stream.update(plaintext)
        file += try stream.finish()
        return file
    }

    /// Encrypts the file at `source` into a new file at `destination`, in constant memory (a
    /// few MiB). The destination appears only when complete (written to a temporary file in
    /// its folder, synced with `fsync` and renamed; an existing file is replaced).
    ///
    /// Threading: the call blocks until the file is written. For a file of 4 MiB or more on a
    /// machine with more than one active core, the payload chunks of each 2 MiB piece are
    /// sealed on all cores (`DispatchQueue.concurrentPerform`) and the output is written by a
    /// serial background queue while the next piece is read; smaller files are encrypted and
    /// written on the calling thread only. The file is the same either way.
    /// - Throws: as `makeStream()`; `AgeError.file` when a file cannot be read or written.
    public func encrypt(contentsOf source: URL, to destination: URL) throws(AgeError) {
        try encrypt(contentsOf: source, to: destination, stream: makeStream(), parallelism: .automatic)
    }

    /// `encrypt(contentsOf:to:)` with a given stream (a new one, nothing pushed yet) and
    /// parallelism.
    func encrypt(contentsOf source: URL, to destination: URL, stream: AgeEncryptingStream, parallelism: AgeParallelism) throws(AgeError) {
        try FilePipe.run(
            from: source, to: destination, unit: AgePayloadCipher.chunkByteCount, parallelism: parallelism, fileError: { AgeError.file($0) }
        ) { (_: UInt64, batchChunks: Int) throws(AgeError) in
            stream.batchChunks = batchChunks
            return FilePipe.Codec(
                update: { (piece: UnsafeRawBufferPointer, write: (UnsafeRawBufferPointer) -> Void) throws(AgeError) in
                    try stream.update(piece, outputBytes: write)
                },
                finish: { (write: (UnsafeRawBufferPointer) -> Void) throws(AgeError) in try stream.finish(outputBytes: write) })
        }
    }
}
