import CSodium

/// AES-256-GCM with a 12-byte nonce and a 16-byte tag appended to the ciphertext.
///
/// libsodium implements AES-GCM only with the AES-NI and PCLMUL instructions (and, before
/// 1.0.19, only on x86-64). On a CPU without them every call throws
/// `CryptoError.aesGCMUnavailable`; check `isAvailable` first.
///
/// Every length is checked before libsodium is called: a message longer than libsodium's
/// maximum throws `CryptoError.messageTooLong` (libsodium itself would abort the process).
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

    /// The longest plaintext libsodium seals (about 64 GiB; less where `size_t` is 32 bits).
    public static var maximumMessageByteCount: UInt64 { SodiumAEAD.maximum(crypto_aead_aes256gcm_messagebytes_max()) }

    /// Encrypts `plaintext` into `output` as ciphertext || tag and returns the bytes written
    /// (`plaintext.count + 16`).
    /// - Throws: `CryptoError` for a wrong key or nonce length, a plaintext longer than
    ///   `maximumMessageByteCount`, a too-small output buffer, or when AES-GCM is unavailable.
    @inlinable
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        guard isAvailable else { throw .aesGCMUnavailable }
        let needed = try SodiumAEAD.checkSeal(
            plaintextCount: plaintext.count, key: key, nonce: nonce, outputCount: output.count, keyByteCount: keyByteCount,
            nonceByteCount: nonceByteCount, tagByteCount: tagByteCount, messageBytesMax: crypto_aead_aes256gcm_messagebytes_max)
        let rc = crypto_aead_aes256gcm_encrypt(
            output.u8, nil, plaintext.u8, UInt64(plaintext.count), aad.u8, UInt64(aad.count), nil, nonce.u8, key.u8)
        guard rc == 0 else { throw .messageTooLong(maximum: Int(clamping: maximumMessageByteCount), actual: plaintext.count) }
        return needed
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
        guard isAvailable else { throw .aesGCMUnavailable }
        let needed = try SodiumAEAD.checkOpen(
            ciphertextCount: ciphertext.count, key: key, nonce: nonce, outputCount: output.count, keyByteCount: keyByteCount,
            nonceByteCount: nonceByteCount, tagByteCount: tagByteCount, messageBytesMax: crypto_aead_aes256gcm_messagebytes_max)
        let rc = crypto_aead_aes256gcm_decrypt(
            output.u8, nil, nil, ciphertext.u8, UInt64(ciphertext.count), aad.u8, UInt64(aad.count), nonce.u8, key.u8)
        guard rc == 0 else { throw .authenticationFailure }
        return needed
    }

    /// Encrypts and returns ciphertext || tag.
    /// - Throws: `CryptoError` for a wrong key or nonce length, a plaintext longer than
    ///   `maximumMessageByteCount`, or when AES-GCM is unavailable.
    @inlinable
    public static func seal(
        _ plaintext: [UInt8], using key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        guard isAvailable else { throw .aesGCMUnavailable }
        try SodiumAEAD.checkMessageLength(plaintext.count, messageBytesMax: crypto_aead_aes256gcm_messagebytes_max)
        return try SodiumAEAD.array(count: plaintext.count + tagByteCount, key: key, input: plaintext, nonce: nonce, aad: aad) {
            (k, p, n, a, out) throws(CryptoError) in try seal(p, key: k, nonce: n, authenticating: a, into: out)
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
        guard isAvailable else { throw .aesGCMUnavailable }
        guard ciphertext.count >= tagByteCount else {
            throw .ciphertextTooShort(minimum: tagByteCount, actual: ciphertext.count)
        }
        return try SodiumAEAD.array(count: ciphertext.count - tagByteCount, key: key, input: ciphertext, nonce: nonce, aad: aad) {
            (k, c, n, a, out) throws(CryptoError) in try open(c, key: k, nonce: n, authenticating: a, into: out)
        }
    }
}
