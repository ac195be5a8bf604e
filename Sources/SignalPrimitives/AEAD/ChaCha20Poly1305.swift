import CSodium

/// ChaCha20-Poly1305 (IETF construction, RFC 8439; libsodium's `crypto_aead_chacha20poly1305_ietf`)
/// with a 32-byte key, a 12-byte nonce and a 16-byte tag appended to the ciphertext.
///
/// The AEAD of the age v1 format (C2SP `age.md`): its STREAM payload seals 64 KiB chunks with a
/// counter nonce, and its recipient stanzas seal the file key under a zero nonce. The 96-bit
/// nonce is too short for random nonces under one key; use it with counters or one-time keys,
/// and `XChaCha20Poly1305` for random nonces.
///
/// Every length is checked before libsodium is called: a message longer than libsodium's
/// maximum (about 256 GiB) throws `CryptoError.messageTooLong` (libsodium itself would abort
/// the process).
public enum ChaCha20Poly1305 {
    /// Key length in bytes.
    public static let keyByteCount = 32
    /// Nonce length in bytes.
    public static let nonceByteCount = 12
    /// Tag length in bytes.
    public static let tagByteCount = 16

    /// The longest plaintext libsodium seals under one nonce (64 × (2^32 − 1) bytes, the
    /// ChaCha20 block counter's limit).
    public static var maximumMessageByteCount: UInt64 { SodiumAEAD.maximum(crypto_aead_chacha20poly1305_ietf_messagebytes_max()) }

    /// Encrypts `plaintext` into `output` as ciphertext || tag and returns the bytes written
    /// (`plaintext.count + 16`). `output` may be the same memory as `plaintext` (in place).
    /// - Throws: `CryptoError` for a wrong key or nonce length, a plaintext longer than
    ///   `maximumMessageByteCount`, a too-small output buffer, or when libsodium is unusable.
    @inlinable
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try Sodium.ensureInitialized()
        let needed = try SodiumAEAD.checkSeal(
            plaintextCount: plaintext.count, key: key, nonce: nonce, outputCount: output.count, keyByteCount: keyByteCount,
            nonceByteCount: nonceByteCount, tagByteCount: tagByteCount, messageBytesMax: crypto_aead_chacha20poly1305_ietf_messagebytes_max)
        let rc = crypto_aead_chacha20poly1305_ietf_encrypt(
            output.u8, nil, plaintext.u8, UInt64(plaintext.count), aad.u8, UInt64(aad.count), nil, nonce.u8, key.u8)
        guard rc == 0 else { throw .messageTooLong(maximum: Int(clamping: maximumMessageByteCount), actual: plaintext.count) }
        return needed
    }

    /// Decrypts ciphertext || tag into `output` and returns the plaintext length
    /// (`ciphertext.count − 16`). The tag is verified before anything is decrypted; on failure
    /// no plaintext is released (libsodium wipes the output bytes it would have written).
    /// `output` may be the same memory as `ciphertext` (in place).
    /// - Throws: `CryptoError.authenticationFailure` when the tag does not verify, and
    ///   `CryptoError` for wrong lengths or when libsodium is unusable.
    @inlinable
    public static func open(
        _ ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try Sodium.ensureInitialized()
        let needed = try SodiumAEAD.checkOpen(
            ciphertextCount: ciphertext.count, key: key, nonce: nonce, outputCount: output.count, keyByteCount: keyByteCount,
            nonceByteCount: nonceByteCount, tagByteCount: tagByteCount, messageBytesMax: crypto_aead_chacha20poly1305_ietf_messagebytes_max)
        let rc = crypto_aead_chacha20poly1305_ietf_decrypt(
            output.u8, nil, nil, ciphertext.u8, UInt64(ciphertext.count), aad.u8, UInt64(aad.count), nonce.u8, key.u8)
        guard rc == 0 else { throw .authenticationFailure }
        return needed
    }

    /// Encrypts and returns ciphertext || tag.
    /// - Throws: `CryptoError` for a wrong key or nonce length, a plaintext longer than
    ///   `maximumMessageByteCount`, or when libsodium is unusable.
    @inlinable
    public static func seal(
        _ plaintext: [UInt8], using key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        try Sodium.ensureInitialized()
        try SodiumAEAD.checkMessageLength(plaintext.count, messageBytesMax: crypto_aead_chacha20poly1305_ietf_messagebytes_max)
        return try SodiumAEAD.array(count: plaintext.count + tagByteCount, key: key, input: plaintext, nonce: nonce, aad: aad) {
            (k, p, n, a, out) throws(CryptoError) in try seal(p, key: k, nonce: n, authenticating: a, into: out)
        }
    }

    /// Verifies and decrypts ciphertext || tag, returning the plaintext.
    /// - Throws: `CryptoError.authenticationFailure` when the tag does not verify,
    ///   `CryptoError.ciphertextTooShort` for inputs under 16 bytes, and `CryptoError` for
    ///   wrong key or nonce lengths or when libsodium is unusable.
    @inlinable
    public static func open(
        _ ciphertext: [UInt8], using key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        try Sodium.ensureInitialized()
        guard ciphertext.count >= tagByteCount else {
            throw .ciphertextTooShort(minimum: tagByteCount, actual: ciphertext.count)
        }
        return try SodiumAEAD.array(count: ciphertext.count - tagByteCount, key: key, input: ciphertext, nonce: nonce, aad: aad) {
            (k, c, n, a, out) throws(CryptoError) in try open(c, key: k, nonce: n, authenticating: a, into: out)
        }
    }
}
