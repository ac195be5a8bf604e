import CSodium

/// SHA-256 (FIPS 180-4) through libsodium.
public struct SHA256: Sendable {
    /// The digest length in bytes.
    public static let byteCount = 32
    @usableFromInline var state = crypto_hash_sha256_state()

    /// Starts an incremental hash.
    public init() {
        _ = Sodium.isInitialized
        crypto_hash_sha256_init(&state)
    }

    /// Absorbs `data`.
    @inlinable
    public mutating func update(bytes data: UnsafeRawBufferPointer) {
        crypto_hash_sha256_update(&state, data.u8, UInt64(data.count))
    }

    /// Absorbs `data`.
    public mutating func update(_ data: [UInt8]) { data.withUnsafeBytes { update(bytes: $0) } }

    /// Writes the 32-byte digest into `output` (at least 32 bytes).
    /// - Throws: `CryptoError.bufferTooSmall` when `output` is shorter than 32 bytes.
    public mutating func finalize(into output: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard output.count >= Self.byteCount, let base = output.baseAddress else {
            throw .bufferTooSmall(required: Self.byteCount, actual: output.count)
        }
        crypto_hash_sha256_final(&state, base.assumingMemoryBound(to: UInt8.self))
    }

    /// Returns the 32-byte digest.
    public mutating func finalize() -> [UInt8] {
        var out = ByteArrays.zeroed32()
        out.withUnsafeMutableBytes { _ = crypto_hash_sha256_final(&state, $0.u8) }
        return out
    }

    /// The SHA-256 digest of `data`.
    @inlinable
    public static func hash(_ data: [UInt8]) -> [UInt8] {
        data.withUnsafeBytes { hash(bytes: $0) }
    }

    /// The SHA-256 digest of `data`.
    @inlinable
    public static func hash(bytes data: UnsafeRawBufferPointer) -> [UInt8] {
        _ = Sodium.isInitialized
        var digest = ByteArrays.zeroed32()
        digest.withUnsafeMutableBytes { _ = crypto_hash_sha256($0.u8, data.u8, UInt64(data.count)) }
        return digest
    }

    /// Writes the 32-byte digest of `data` into `output` (at least 32 bytes).
    /// - Throws: `CryptoError.bufferTooSmall` when `output` is shorter than 32 bytes.
    @inlinable
    public static func hash(bytes data: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard output.count >= byteCount else { throw .bufferTooSmall(required: byteCount, actual: output.count) }
        _ = Sodium.isInitialized
        _ = crypto_hash_sha256(output.u8, data.u8, UInt64(data.count))
    }
}
