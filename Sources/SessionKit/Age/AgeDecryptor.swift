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
/// requires of passphrase files.
public struct AgeDecryptor: Sendable {
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
    /// - Throws: `AgeError` (`header`, `noMatch`, `headerMAC`, `payload`, `armor`).
    public func decrypt(_ file: Data) throws(AgeError) -> Data {
        let stream = makeStream()
        var plaintext = Data()
        try file.withBytes { (bytes: UnsafeRawBufferPointer) throws(AgeError) in
            try stream.update(bytes, releaseBytes: { plaintext.append(contentsOf: $0) })
        }
        try stream.finish(releaseBytes: { plaintext.append(contentsOf: $0) })
        return plaintext
    }

    /// Decrypts the file at `source` into a new file at `destination`, in constant memory. The
    /// plaintext goes to a temporary file in the destination's folder, renamed to
    /// `destination` (replacing any file there) only after the final chunk verified; on any
    /// error it is removed and `destination` is untouched.
    /// - Throws: `AgeError` as `decrypt(_:)`; `AgeError.file` when a file cannot be read or
    ///   written.
    public func decrypt(contentsOf source: URL, to destination: URL) throws(AgeError) {
        let stream = makeStream()
        do {
            let input = try ReadableFile(source)
            let output = try AtomicFileWriter(destination)
            var writeFailure: FileAccessError?
            let write = { (bytes: UnsafeRawBufferPointer) in
                guard writeFailure == nil else { return }
                do throws(FileAccessError) { try output.write(bytes) } catch { writeFailure = error }
            }
            do throws(FileError<AgeError>) {
                try input.forEachPiece(size: AgePayloadCipher.sealedChunkByteCount) { (piece: UnsafeRawBufferPointer) throws(AgeError) in
                    try stream.update(piece, releaseBytes: write)
                    if let writeFailure { throw .file(writeFailure.description) }
                }
            } catch {
                switch error {
                case let .access(failure): throw AgeError.file(failure.description)
                case let .body(failure): throw failure
                }
            }
            try stream.finish(releaseBytes: write)
            if let writeFailure { throw AgeError.file(writeFailure.description) }
            try output.commit()
        } catch let error as FileAccessError {
            throw .file(error.description)
        } catch let error as AgeError {
            throw error
        } catch {
            throw .file("\(error)")
        }
    }
}
