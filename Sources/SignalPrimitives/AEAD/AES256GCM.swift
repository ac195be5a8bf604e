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
    public static var maximumMessageByteCount: UInt64 { SodiumAEAD<Self>.maximumMessageByteCount }

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
        return try SodiumAEAD<Self>.seal(plaintext, key: key, nonce: nonce, authenticating: aad, into: output)
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
        return try SodiumAEAD<Self>.open(ciphertext, key: key, nonce: nonce, authenticating: aad, into: output)
    }

    /// Encrypts and returns ciphertext || tag.
    /// - Throws: `CryptoError` for a wrong key or nonce length, a plaintext longer than
    ///   `maximumMessageByteCount`, or when AES-GCM is unavailable.
    @inlinable
    public static func seal(
        _ plaintext: [UInt8], using key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        guard isAvailable else { throw .aesGCMUnavailable }
        return try SodiumAEAD<Self>.seal(plaintext, key: key, nonce: nonce, authenticating: aad)
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
        return try SodiumAEAD<Self>.open(ciphertext, key: key, nonce: nonce, authenticating: aad)
    }
}

extension AES256GCM: SodiumAEADAlgorithm {
    @inlinable
    static func messageBytesMax() -> Int { crypto_aead_aes256gcm_messagebytes_max() }

    @inlinable
    static func encrypt(
        _ c: UnsafeMutablePointer<UInt8>, _ clen: UnsafeMutablePointer<UInt64>?, _ m: UnsafePointer<UInt8>, _ mlen: UInt64,
        _ ad: UnsafePointer<UInt8>, _ adlen: UInt64, _ npub: UnsafePointer<UInt8>, _ k: UnsafePointer<UInt8>
    ) -> Int32 {
        crypto_aead_aes256gcm_encrypt(c, clen, m, mlen, ad, adlen, nil, npub, k)
    }

    @inlinable
    static func decrypt(
        _ m: UnsafeMutablePointer<UInt8>, _ mlen: UnsafeMutablePointer<UInt64>?, _ c: UnsafePointer<UInt8>, _ clen: UInt64,
        _ ad: UnsafePointer<UInt8>, _ adlen: UInt64, _ npub: UnsafePointer<UInt8>, _ k: UnsafePointer<UInt8>
    ) -> Int32 {
        crypto_aead_aes256gcm_decrypt(m, mlen, nil, c, clen, ad, adlen, npub, k)
    }
}
