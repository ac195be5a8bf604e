import CSodium

/// XChaCha20-Poly1305 (IETF construction, libsodium's `crypto_aead_xchacha20poly1305_ietf`)
/// with a 32-byte key, a 24-byte nonce and a 16-byte tag appended to the ciphertext.
///
/// The 192-bit nonce makes random nonces safe for any number of messages a device will ever
/// seal under one key, which AES-GCM's 96-bit nonces are not (SPEC §6 uses it for
/// self-encryption). It runs on every CPU.
///
/// Every length is checked before libsodium is called: a message longer than libsodium's
/// maximum throws `CryptoError.messageTooLong` (libsodium itself would abort the process).
public enum XChaCha20Poly1305 {
    /// Key length in bytes.
    public static let keyByteCount = 32
    /// Nonce length in bytes.
    public static let nonceByteCount = 24
    /// Tag length in bytes.
    public static let tagByteCount = 16

    /// The longest plaintext libsodium seals (2^64 − 17 bytes; `size_t`'s maximum minus the tag
    /// where that is smaller).
    public static var maximumMessageByteCount: UInt64 { SodiumAEAD<Self>.maximumMessageByteCount }

    /// Encrypts `plaintext` into `output` as ciphertext || tag and returns the bytes written
    /// (`plaintext.count + 16`).
    /// - Throws: `CryptoError` for a wrong key or nonce length, a plaintext longer than
    ///   `maximumMessageByteCount`, a too-small output buffer, or when libsodium is unusable.
    @inlinable
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try Sodium.ensureInitialized()
        return try SodiumAEAD<Self>.seal(plaintext, key: key, nonce: nonce, authenticating: aad, into: output)
    }

    /// Decrypts ciphertext || tag into `output` and returns the plaintext length
    /// (`ciphertext.count − 16`). On failure no plaintext is released: libsodium wipes the
    /// output bytes it wrote.
    /// - Throws: `CryptoError.authenticationFailure` when the tag does not verify, and
    ///   `CryptoError` for wrong lengths or when libsodium is unusable.
    @inlinable
    public static func open(
        _ ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try Sodium.ensureInitialized()
        return try SodiumAEAD<Self>.open(ciphertext, key: key, nonce: nonce, authenticating: aad, into: output)
    }

    /// Encrypts and returns ciphertext || tag.
    /// - Throws: `CryptoError` for a wrong key or nonce length or a plaintext longer than
    ///   `maximumMessageByteCount`.
    @inlinable
    public static func seal(
        _ plaintext: [UInt8], using key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        try Sodium.ensureInitialized()
        return try SodiumAEAD<Self>.seal(plaintext, key: key, nonce: nonce, authenticating: aad)
    }

    /// Verifies and decrypts ciphertext || tag, returning the plaintext.
    /// - Throws: `CryptoError.authenticationFailure` when the tag does not verify,
    ///   `CryptoError.ciphertextTooShort` for inputs under 16 bytes, and `CryptoError` for
    ///   wrong key or nonce lengths.
    @inlinable
    public static func open(
        _ ciphertext: [UInt8], using key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        try Sodium.ensureInitialized()
        return try SodiumAEAD<Self>.open(ciphertext, key: key, nonce: nonce, authenticating: aad)
    }
}

extension XChaCha20Poly1305: SodiumAEADAlgorithm {
    @inlinable
    static func messageBytesMax() -> Int { crypto_aead_xchacha20poly1305_ietf_messagebytes_max() }

    @inlinable
    static func encrypt(
        _ c: UnsafeMutablePointer<UInt8>, _ clen: UnsafeMutablePointer<UInt64>?, _ m: UnsafePointer<UInt8>, _ mlen: UInt64,
        _ ad: UnsafePointer<UInt8>, _ adlen: UInt64, _ npub: UnsafePointer<UInt8>, _ k: UnsafePointer<UInt8>
    ) -> Int32 {
        crypto_aead_xchacha20poly1305_ietf_encrypt(c, clen, m, mlen, ad, adlen, nil, npub, k)
    }

    @inlinable
    static func decrypt(
        _ m: UnsafeMutablePointer<UInt8>, _ mlen: UnsafeMutablePointer<UInt64>?, _ c: UnsafePointer<UInt8>, _ clen: UInt64,
        _ ad: UnsafePointer<UInt8>, _ adlen: UInt64, _ npub: UnsafePointer<UInt8>, _ k: UnsafePointer<UInt8>
    ) -> Int32 {
        crypto_aead_xchacha20poly1305_ietf_decrypt(m, mlen, nil, c, clen, ad, adlen, npub, k)
    }
}
