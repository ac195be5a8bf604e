#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SessionKitAge
import SignalPrimitives

/// Random access to an attachment's content (SPEC §10): reads the chunk or chunks holding a
/// byte range from the ciphertext (a file or `Data`), checks their tags (with the final flag
/// on the last chunk) and returns the content, for seeking in media and previews.
///
/// The digest needs the whole ciphertext, so a reader checks only the length (when it opens)
/// and the tags of the chunks it reads: what it returns is authentic content under the
/// pointer's key, but a reader does not prove the ciphertext is the one the sender pointed to.
/// Not thread-safe: use one reader from one task at a time.
public final class AttachmentReader {
    private enum Source {
        case file(ReadableFile)
        case data(Data)
    }

    private let source: Source
    private let cipher: AgePayloadCipher
    private let pointer: AttachmentPointer
    private let chunkCount: UInt64
    private let paddedLength: UInt64

    /// The content length n.
    public var contentLength: UInt64 { pointer.contentLength }

    /// A reader of the attachment file at `url`.
    /// - Throws: `SessionError.invalidMessage` when the file's length is not the one the pointer
    ///   requires; `SessionError.file` when it cannot be read.
    public convenience init(contentsOf url: URL, pointer: AttachmentPointer) throws(SessionError) {
        let file: ReadableFile
        do { file = try ReadableFile(url) } catch { throw .file(error.description) }
        try self.init(source: .file(file), pointer: pointer)
    }

    /// A reader of a ciphertext held in memory.
    /// - Throws: `SessionError.invalidMessage` when its length is not the one the pointer
    ///   requires.
    public convenience init(ciphertext: Data, pointer: AttachmentPointer) throws(SessionError) {
        try self.init(source: .data(ciphertext), pointer: pointer)
    }

    private init(source: Source, pointer: AttachmentPointer) throws(SessionError) {
        self.source = source
        self.pointer = pointer
        paddedLength = try pointer.paddedLength()
        chunkCount = AgePayloadCipher.chunkCount(plaintextCount: paddedLength)
        let expected = try pointer.ciphertextLength()
        let actual: UInt64
        switch source {
        case let .file(file):
            do { actual = try file.byteCount() } catch { throw .file(error.description) }
        case let .data(data):
            actual = UInt64(data.count)
        }
        guard actual == expected else { throw .invalidMessage }
        var nonce = [UInt8](repeating: 0, count: AgePayloadCipher.nonceByteCount)
        try Self.read(source, at: 0, into: &nonce)
        do { cipher = try AgePayloadCipher(fileKey: pointer.fileKey, nonce: nonce) } catch { throw AttachmentEncryptor.sessionError(error) }
    }

    private static func read(_ source: Source, at offset: UInt64, into buffer: inout [UInt8]) throws(SessionError) {
        switch source {
        case let .file(file):
            let count: Int
            do {
                count = try buffer.withMutableBytes { (b: UnsafeMutableRawBufferPointer) throws(FileAccessError) in try file.read(at: offset, into: b) }
            } catch {
                throw .file(error.description)
            }
            // The length was checked when the reader opened: a short read means the file changed.
            guard count == buffer.count else { throw .invalidMessage }
        case let .data(data):
            guard let start = Int(exactly: offset), start <= data.count, buffer.count <= data.count - start else { throw .invalidMessage }
            let base = data.startIndex + start
            buffer.withUnsafeMutableBytes { _ = data.copyBytes(to: $0, from: base ..< base + $0.count) }
        }
    }

    /// The content bytes `offset ..< offset + count`, clipped to the content's end (fewer
    /// bytes, or none, past it). Reads and verifies every chunk the range touches.
    /// - Throws: `SessionError.invalidMessage` when a chunk's tag does not verify (or the file
    ///   changed since the reader opened it); `SessionError.file` on a read error.
    public func read(offset: UInt64, count: Int) throws(SessionError) -> Data {
        guard count > 0, offset < pointer.contentLength else { return Data() }
        let end = min(pointer.contentLength, offset + min(UInt64(count), pointer.contentLength - offset))
        let chunkSize = UInt64(AgePayloadCipher.chunkByteCount)
        var out = Data()
        out.reserveCapacity(Int(end - offset))
        var sealed: [UInt8] = []
        var opened = [UInt8](repeating: 0, count: AgePayloadCipher.chunkByteCount)
        var index = offset / chunkSize
        while index * chunkSize < end {
            let final = index == chunkCount - 1
            let plainLength = final ? Int(paddedLength - index * chunkSize) : AgePayloadCipher.chunkByteCount
            sealed = [UInt8](repeating: 0, count: plainLength + ChaCha20Poly1305.tagByteCount)
            try Self.read(source, at: UInt64(AgePayloadCipher.nonceByteCount) + index * UInt64(AgePayloadCipher.sealedChunkByteCount), into: &sealed)
            let opening: Int?
            do {
                opening = try sealed.withBytes { (c: UnsafeRawBufferPointer) throws(AgeError) in
                    try opened.withMutableBytes { (o: UnsafeMutableRawBufferPointer) throws(AgeError) in
                        try cipher.open(c, index: index, final: final, into: o)
                    }
                }
            } catch {
                throw AttachmentEncryptor.sessionError(error)
            }
            guard opening != nil else { throw .invalidMessage }
            let chunkStart = index * chunkSize
            let from = Int(max(offset, chunkStart) - chunkStart)
            let to = Int(min(end, chunkStart + UInt64(plainLength)) - chunkStart)
            opened.withUnsafeBytes { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[from ..< to])) }
            index += 1
        }
        return out
    }
}
