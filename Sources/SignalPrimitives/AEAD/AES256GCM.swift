import CSodium

/// AES-256-GCM with a 12-byte nonce and a 16-byte tag appended to the ciphertext.
///
/// libsodium implements AES-GCM only with the AES-NI and PCLMUL instructions. On a CPU
/// without them every call throws `CryptoError.aesGCMUnavailable`; check `isAvailable` first.
public enum AES256GCM {
    /// Key length in bytes.
    public static let keyByteCount = 32
    /// Nonce length in bytes.
    public static let nonceByteCount = 12
    /// Tag length in bytes.
    public static let tagByteCount = 16

    private static let available: Bool = Sodium.isInitialized && crypto_aead_aes256gcm_is_available() == 1

    /// Whether this CPU supports libsodium's AES-256-GCM.
    public static var isAvailable: Bool { available }

    /// Encrypts `plaintext` into `output` as ciphertext || tag and returns the bytes written
    /// (`plaintext.count + 16`).
    /// - Throws: `CryptoError` for a wrong key or nonce length, a too-small output buffer,
    ///   or when AES-GCM is unavailable.
    @inlinable
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try checkParameters(key: key, nonce: nonce)
        let needed = plaintext.count + tagByteCount
        guard output.count >= needed, let out = output.baseAddress else {
            throw .bufferTooSmall(required: needed, actual: output.count)
        }
        var written: UInt64 = 0
        let rc = crypto_aead_aes256gcm_encrypt(
            out.assumingMemoryBound(to: UInt8.self), &written,
            plaintext.u8, UInt64(plaintext.count),
            aad.u8, UInt64(aad.count), nil,
            nonce.u8, key.u8)
        guard rc == 0 else { throw .messageTooLong(maximum: Int(crypto_aead_aes256gcm_messagebytes_max()), actual: plaintext.count) }
        return Int(written)
    }

    /// Decrypts ciphertext || tag into `output` and returns the plaintext length
    /// (`ciphertext.count − 16`). On failure no plaintext is released: libsodium wipes the
    /// output bytes it wrote.
    /// - Throws: `CryptoError.authenticationFailure` when the tag does not verify, and
    ///   `CryptoError` for wrong lengths or when AES-GCM is unavailable.
    @inlinable
    public static func open(
        _ ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try checkParameters(key: key, nonce: nonce)
        guard ciphertext.count >= tagByteCount else {
            throw .ciphertextTooShort(minimum: tagByteCount, actual: ciphertext.count)
        }
        let needed = ciphertext.count - tagByteCount
        guard output.count >= needed else { throw .bufferTooSmall(required: needed, actual: output.count) }
        var written: UInt64 = 0
        let rc = crypto_aead_aes256gcm_decrypt(
            output.u8, &written, nil, ciphertext.u8, UInt64(ciphertext.count),
            aad.u8, UInt64(aad.count), nonce.u8, key.u8)
        guard rc == 0 else { throw .authenticationFailure }
        return Int(written)
    }

    /// Encrypts and returns ciphertext || tag.
    /// - Throws: `CryptoError` for a wrong key or nonce length, or when AES-GCM is unavailable.
    @inlinable
    public static func seal(
        _ plaintext: [UInt8], using key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        // The result is written in place (no zero-fill, no intermediate copy).
        try [UInt8](uninitializedCount: plaintext.count + tagByteCount) { (out) throws(CryptoError) -> Int in
            // One Result from the innermost call: the buffer accesses themselves cannot fail.
            let written: Result<Int, CryptoError> = key.withUnsafeBytes { k in
                plaintext.withUnsafeBytes { p in
                    nonce.withUnsafeBytes { n in
                        aad.withUnsafeBytes { a in
                            Result { () throws(CryptoError) in try seal(p, key: k, nonce: n, authenticating: a, into: out) }
                        }
                    }
                }
            }
            return try written.get()
        }
    }

    /// Verifies and decrypts ciphertext || tag, returning the plaintext.
    /// - Throws: `CryptoError.authenticationFailure` when the tag does not verify,
    ///   `CryptoError.ciphertextTooShort` for inputs under 16 bytes, and `CryptoError` for
    ///   wrong key or nonce lengths or when AES-GCM is unavailable.
    @inlinable
    public static func open(
        _ ciphertext: [UInt8], using key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        guard ciphertext.count >= tagByteCount else {
            throw .ciphertextTooShort(minimum: tagByteCount, actual: ciphertext.count)
        }
        return try [UInt8](uninitializedCount: ciphertext.count - tagByteCount) { (out) throws(CryptoError) -> Int in
            // One Result from the innermost call: the buffer accesses themselves cannot fail.
            let written: Result<Int, CryptoError> = key.withUnsafeBytes { k in
                ciphertext.withUnsafeBytes { c in
                    nonce.withUnsafeBytes { n in
                        aad.withUnsafeBytes { a in
                            Result { () throws(CryptoError) in try open(c, key: k, nonce: n, authenticating: a, into: out) }
                        }
                    }
                }
            }
            return try written.get()
        }
    }

    @usableFromInline
    static func checkParameters(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer) throws(CryptoError) {
        guard isAvailable else { throw .aesGCMUnavailable }
        guard key.count == keyByteCount else { throw .invalidKeyLength(expected: keyByteCount, actual: key.count) }
        guard nonce.count == nonceByteCount else { throw .invalidNonceLength(expected: nonceByteCount, actual: nonce.count) }
    }
}
