import CSodium

/// scrypt (RFC 7914) through libsodium's `crypto_pwhash_scryptsalsa208sha256_ll`: a
/// memory-hard key derivation from a passphrase.
///
/// It needs 128 · r · N bytes of memory and time proportional to N · r · p; with age's
/// parameters (r = 8, p = 1) a work factor of 2^18 takes 256 MiB, 2^20 one GiB. The memory is
/// allocated by libsodium for the call and released before it returns.
public enum Scrypt {
    /// The largest output libsodium's scrypt produces: (2^32 − 1) × 32 bytes.
    public static let maximumOutputByteCount: UInt64 = ((1 << 32) - 1) * 32

    /// The memory one derivation needs, 128 · r · 2^logN bytes, or `nil` when that does not fit
    /// in 64 bits.
    public static func memoryByteCount(logN: Int, r: Int) -> UInt64? {
        guard (1 ... 63).contains(logN), r >= 1 else { return nil }
        let (blocks, overflow) = UInt64(128).multipliedReportingOverflow(by: UInt64(r))
        guard !overflow, blocks.leadingZeroBitCount >= logN else { return nil }
        return blocks << UInt64(logN)
    }

    /// Derives `output.count` bytes from `password` and `salt` with N = 2^logN, r and p.
    /// - Throws: `CryptoError.invalidOutputLength` for an empty output or one above
    ///   `maximumOutputByteCount`; `CryptoError.keyDerivationFailed` when the parameters are
    ///   outside scrypt's domain (logN outside 1 … 63, r or p below 1, r · p ≥ 2^30, a memory
    ///   size above 64 bits) or libsodium could not allocate the memory; on failure `output`
    ///   is wiped.
    public static func deriveKey(
        password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, logN: Int, r: Int, p: Int,
        into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) {
        try Sodium.ensureInitialized()
        guard output.count > 0, UInt64(output.count) <= maximumOutputByteCount else {
            throw .invalidOutputLength(requested: output.count, maximum: Int(clamping: maximumOutputByteCount))
        }
        guard memoryByteCount(logN: logN, r: r) != nil, p >= 1, let r32 = UInt32(exactly: r), let p32 = UInt32(exactly: p),
              UInt64(r32) * UInt64(p32) < 1 << 30
        else { throw .keyDerivationFailed }
        let rc = crypto_pwhash_scryptsalsa208sha256_ll(
            password.u8, password.count, salt.u8, salt.count, UInt64(1) << UInt64(logN), r32, p32, output.u8, output.count)
        guard rc == 0 else {
            SecureMemory.zero(output)
            throw .keyDerivationFailed
        }
    }

    /// Derives a key of `outputByteCount` bytes (in zeroing storage) from `password` and `salt`.
    /// - Throws: as `deriveKey(password:salt:logN:r:p:into:)`.
    public static func deriveKey(
        password: UnsafeRawBufferPointer, salt: [UInt8], logN: Int, r: Int, p: Int, outputByteCount: Int
    ) throws(CryptoError) -> SymmetricKey {
        guard outputByteCount > 0, UInt64(outputByteCount) <= maximumOutputByteCount else {
            throw .invalidOutputLength(requested: outputByteCount, maximum: Int(clamping: maximumOutputByteCount))
        }
        let storage = try SecureBytes(count: outputByteCount) { (out: UnsafeMutableRawBufferPointer) throws(CryptoError) in
            try salt.withBytes { (s: UnsafeRawBufferPointer) throws(CryptoError) in
                try deriveKey(password: password, salt: s, logN: logN, r: r, p: p, into: out)
            }
        }
        return SymmetricKey(storage: storage)
    }

    /// Derives a key of `outputByteCount` bytes from a password held in secure storage.
    /// - Throws: as `deriveKey(password:salt:logN:r:p:into:)`.
    public static func deriveKey(
        password: SecureBytes, salt: [UInt8], logN: Int, r: Int, p: Int, outputByteCount: Int
    ) throws(CryptoError) -> SymmetricKey {
        try password.withUnsafeBytes { (pw: UnsafeRawBufferPointer) throws(CryptoError) in
            try deriveKey(password: pw, salt: salt, logN: logN, r: r, p: p, outputByteCount: outputByteCount)
        }
    }
}
