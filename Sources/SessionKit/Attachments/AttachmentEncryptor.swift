#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SessionKitAge
import SignalPrimitives

/// Encrypts an attachment pushed in pieces of any size (SPEC §10), in constant memory, for
/// apps that produce content and upload ciphertext in their own way. `Attachment.encrypt`
/// covers `Data`, files and `AsyncSequence`s.
///
/// Each `update` hands out the ciphertext of whole chunks as they are known not to be the last;
/// `finish` pads the content with zeros to padded(n) (up to about 5 % more), seals the rest and
/// returns the pointer. The concatenation of all the output is the ciphertext.
///
/// Not thread-safe: use one encryptor from one task at a time; each encrypts one attachment
/// under its own random key and nonce.
public final class AttachmentEncryptor {
    private let fileKey: AgeFileKey
    private var payload: AgePayloadEncoder
    private var digest = SHA256()
    private var contentLength: UInt64 = 0
    private var prefix: [UInt8]?
    private var finished = false
    /// 64 KiB of zeros, the padding's source.
    private static let zeros = [UInt8](repeating: 0, count: AgePayloadCipher.chunkByteCount)

    /// An encryptor with a new random file key and nonce from `random` (the system CSPRNG by
    /// default; pass another source only for tests).
    /// - Throws: `SessionError.primitive` when libsodium is unusable.
    public convenience init(using random: any RandomSource = SystemRandomSource()) throws(SessionError) {
        try self.init(fileKey: AgeFileKey(using: random), nonce: random.bytes(AgePayloadCipher.nonceByteCount))
    }

    /// An encryptor with a given key and nonce (tests and vectors only: never reuse a key).
    /// - Throws: `SessionError.invalidPayload` for a nonce that is not 16 bytes,
    ///   `SessionError.primitive` when libsodium is unusable.
    @_spi(Testing) public init(fileKey: AgeFileKey, nonce: [UInt8]) throws(SessionError) {
        guard nonce.count == AgePayloadCipher.nonceByteCount else { throw .invalidPayload }
        self.fileKey = fileKey
        do {
            payload = AgePayloadEncoder(cipher: try AgePayloadCipher(fileKey: fileKey, nonce: nonce))
        } catch {
            throw Self.sessionError(error)
        }
        prefix = nonce
    }

    /// The most payload chunks sealed together on all cores (`AgePayloadEncoder`); 1 (the
    /// default) seals them one by one on the calling thread. Set by the file path.
    var batchChunks: Int {
        get { payload.batchChunks }
        set { payload.batchChunks = newValue }
    }

    static func sessionError(_ error: AgeError) -> SessionError {
        switch error {
        case let .primitive(crypto): return .primitive(crypto)
        default: return .invalidMessage
        }
    }

    private func emit(_ bytes: UnsafeRawBufferPointer, _ output: (UnsafeRawBufferPointer) -> Void) {
        digest.update(bytes: bytes)
        output(bytes)
    }

    private func takePrefix(_ output: (UnsafeRawBufferPointer) -> Void) {
        if let nonce = prefix {
            prefix = nil
            nonce.withUnsafeBytes { emit($0, output) }
        }
    }

    /// Encrypts the next piece of content; the ciphertext that is ready goes to `output` (the
    /// buffer is valid only during the call).
    /// - Throws: `SessionError.invalidMessage` after `finish` or for content beyond 2^64 − 1
    ///   bytes; `SessionError.primitive`.
    public func update(_ content: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) -> Void) throws(SessionError) {
        guard !finished else { throw .invalidMessage }
        let (total, overflow) = contentLength.addingReportingOverflow(UInt64(content.count))
        guard !overflow else { throw .invalidMessage }
        contentLength = total
        takePrefix(output)
        do {
            try payload.update(content) { emit($0, output) }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Encrypts the next piece of content and returns the ciphertext that is ready.
    /// - Throws: as `update(_:output:)`.
    public func update(_ content: Data) throws(SessionError) -> Data {
        var out = Data()
        try content.withBytes { (bytes: UnsafeRawBufferPointer) throws(SessionError) in
            try update(bytes) { out.append(contentsOf: $0) }
        }
        return out
    }

    /// Pads the content to padded(n), seals the final chunk and returns the pointer; the last
    /// ciphertext goes to `output`, chunk by chunk.
    /// - Throws: `SessionError.invalidMessage` when called twice or when padded(n) would exceed
    ///   2^64 − 1; `SessionError.primitive`.
    public func finish(output: (UnsafeRawBufferPointer) -> Void) throws(SessionError) -> AttachmentPointer {
        guard !finished else { throw .invalidMessage }
        finished = true
        takePrefix(output)
        var padding = try Attachment.paddedLength(forContentLength: contentLength) - contentLength
        let zeros = Self.zeros
        do {
            while padding > 0 {
                let take = Int(min(padding, UInt64(zeros.count)))
                try zeros.withBytes { (z: UnsafeRawBufferPointer) throws(AgeError) in
                    try payload.update(UnsafeRawBufferPointer(rebasing: z[0 ..< take])) { emit($0, output) }
                }
                padding -= UInt64(take)
            }
            try payload.finish { emit($0, output) }
        } catch {
            throw Self.sessionError(error)
        }
        return try AttachmentPointer(fileKey: fileKey, ciphertextDigest: digest.finalize(), contentLength: contentLength)
    }

    /// Pads, seals the final chunk, and returns the last ciphertext bytes and the pointer.
    /// - Throws: as `finish(output:)`.
    public func finish() throws(SessionError) -> (ciphertext: Data, pointer: AttachmentPointer) {
        var out = Data()
        let pointer = try finish { out.append(contentsOf: $0) }
        return (out, pointer)
    }
}
