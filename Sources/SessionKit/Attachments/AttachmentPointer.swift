#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SessionKitAge
import SignalPrimitives

/// What a message carries for an attachment (SPEC §10): 57 bytes,
///
///     pointer = 0x28 || file_key (16) || SHA-256(ciphertext) (32) || u64(n)
///
/// with n the content length. It holds the key: send it only inside an encrypted message, and
/// treat `serialized()` like a key. `description` never shows the key.
public struct AttachmentPointer: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The type byte of a pointer.
    public static let typeByte: UInt8 = 0x28
    /// The length of an encoded pointer.
    public static let byteCount = 1 + AgeFileKey.byteCount + SHA256.byteCount + 8

    /// The attachment's key.
    public let fileKey: AgeFileKey
    /// The SHA-256 of the whole ciphertext (32 bytes).
    public let ciphertextDigest: [UInt8]
    /// The content length n, before padding.
    public let contentLength: UInt64

    /// A pointer from its parts.
    /// - Throws: `SessionError.invalidPayload` when `ciphertextDigest` is not 32 bytes.
    public init(fileKey: AgeFileKey, ciphertextDigest: [UInt8], contentLength: UInt64) throws(SessionError) {
        guard ciphertextDigest.count == SHA256.byteCount else { throw .invalidPayload }
        self.fileKey = fileKey
        self.ciphertextDigest = ciphertextDigest
        self.contentLength = contentLength
    }

    /// Decodes a pointer. The content length is not checked here: a pointer whose padded length
    /// would exceed 2^64 − 1 decodes, and decrypting with it fails (`invalidMessage`).
    /// - Throws: `SessionError.invalidPayload` for an empty input or a length other than 57
    ///   bytes, `SessionError.unsupportedVersion` for a first byte other than 0x28 (checked
    ///   before the length).
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        guard let type = bytes.first else { throw .invalidPayload }
        guard type == Self.typeByte else { throw .unsupportedVersion }
        guard bytes.count == Self.byteCount else { throw .invalidPayload }
        let keyEnd = 1 + AgeFileKey.byteCount
        let digestEnd = keyEnd + SHA256.byteCount
        fileKey = bytes.withUnsafeBytes { all in
            // 16 bytes exactly, so AgeFileKey accepts them.
            AgeFileKey(unchecked: SecureBytes(copying: UnsafeRawBufferPointer(rebasing: all[1 ..< keyEnd])))
        }
        ciphertextDigest = Array(bytes[keyEnd ..< digestEnd])
        contentLength = bytes[digestEnd...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// Decodes a pointer from `Data`; as `init(serialized:)` for bytes.
    /// - Throws: the errors of `init(serialized:)`.
    public init(serialized data: Data) throws(SessionError) {
        var bytes = [UInt8](data)
        defer { SecureMemory.zero(&bytes) }
        try self.init(serialized: bytes)
    }

    /// The 57-byte encoding. It holds the key: wipe it (`SecureMemory.zero`) when sent.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = [Self.typeByte]
        out.reserveCapacity(Self.byteCount)
        fileKey.withUnsafeBytes { out.append(contentsOf: $0) }
        out += ciphertextDigest
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: contentLength >> UInt64(shift))) }
        return out
    }

    /// padded(n) for this pointer's content length (`Attachment.paddedLength(forContentLength:)`).
    /// - Throws: `SessionError.invalidMessage` when it would exceed 2^64 − 1.
    public func paddedLength() throws(SessionError) -> UInt64 {
        try Attachment.paddedLength(forContentLength: contentLength)
    }

    /// The exact ciphertext length this pointer requires.
    /// - Throws: `SessionError.invalidMessage` when it would exceed 2^64 − 1.
    public func ciphertextLength() throws(SessionError) -> UInt64 {
        try Attachment.ciphertextLength(forContentLength: contentLength)
    }

    /// Equal keys (compared in constant time), digests and lengths.
    public static func == (lhs: AttachmentPointer, rhs: AttachmentPointer) -> Bool {
        let sameKey = lhs.fileKey.withUnsafeBytes { a in rhs.fileKey.withUnsafeBytes { b in ConstantTime.equals(a, b) } }
        return sameKey && lhs.ciphertextDigest == rhs.ciphertextDigest && lhs.contentLength == rhs.contentLength
    }

    /// The digest and length; the key redacted.
    public var description: String {
        "AttachmentPointer(digest: \(Hex.encode(ciphertextDigest)), contentLength: \(contentLength), key redacted)"
    }
    /// The digest and length; the key redacted.
    public var debugDescription: String { description }
}
