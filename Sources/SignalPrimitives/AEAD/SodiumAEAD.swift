import CSodium

/// The shape every libsodium combined-mode AEAD shares (`crypto_aead_*_encrypt` and
/// `_decrypt`): ciphertext || 16-byte tag, a fixed key and nonce length, and a maximum message
/// length above which libsodium aborts the process (`sodium_misuse`) instead of returning an
/// error. `AES256GCM` and `XChaCha20Poly1305` are thin wrappers around one of these.
///
/// Every length is checked here, before libsodium is called, and compared as `UInt64`: the
/// limits are `size_t` values that do not fit in a 32-bit `Int` (so `Int(size_t)` would trap
/// on watchOS's arm64_32).
@usableFromInline
struct SodiumAEAD: Sendable {
    @usableFromInline typealias Encrypt = @convention(c) (
        UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt64>?, UnsafePointer<UInt8>?, UInt64,
        UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>?, UnsafePointer<UInt8>, UnsafePointer<UInt8>
    ) -> Int32
    @usableFromInline typealias Decrypt = @convention(c) (
        UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt64>?, UnsafeMutablePointer<UInt8>?,
        UnsafePointer<UInt8>, UInt64, UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>, UnsafePointer<UInt8>
    ) -> Int32

    @usableFromInline let keyByteCount: Int
    @usableFromInline let nonceByteCount: Int
    @usableFromInline let tagByteCount: Int
    /// The longest message libsodium accepts, as reported by the library.
    @usableFromInline let maximumMessageByteCount: UInt64
    @usableFromInline let encrypt: Encrypt
    @usableFromInline let decrypt: Decrypt

    /// - Parameter maximumMessageByteCount: libsodium's `*_messagebytes_max()`, a `size_t`
    ///   that Swift imports as `Int`: its bits are read as unsigned (XChaCha20's maximum is
    ///   above `Int.max`, which would read as negative).
    @usableFromInline
    init(keyByteCount: Int, nonceByteCount: Int, tagByteCount: Int, maximumMessageByteCount: Int,
         encrypt: Encrypt, decrypt: Decrypt) {
        self.keyByteCount = keyByteCount
        self.nonceByteCount = nonceByteCount
        self.tagByteCount = tagByteCount
        self.maximumMessageByteCount = UInt64(UInt(bitPattern: maximumMessageByteCount))
        self.encrypt = encrypt
        self.decrypt = decrypt
    }

    /// `maximumMessageByteCount` for an error message (clamped to `Int`).
    @usableFromInline var reportedMaximum: Int { Int(clamping: maximumMessageByteCount) }

    @usableFromInline
    func checkParameters(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer) throws(CryptoError) {
        guard key.count == keyByteCount else { throw .invalidKeyLength(expected: keyByteCount, actual: key.count) }
        guard nonce.count == nonceByteCount else { throw .invalidNonceLength(expected: nonceByteCount, actual: nonce.count) }
    }

    /// Encrypts `plaintext` into `output` as ciphertext || tag; returns the bytes written.
    @inlinable
    func seal(
        _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try checkParameters(key: key, nonce: nonce)
        guard UInt64(plaintext.count) <= maximumMessageByteCount else {
            throw .messageTooLong(maximum: reportedMaximum, actual: plaintext.count)
        }
        let needed = plaintext.count + tagByteCount
        guard output.count >= needed, let out = output.baseAddress else {
            throw .bufferTooSmall(required: needed, actual: output.count)
        }
        var written: UInt64 = 0
        let rc = encrypt(
            out.assumingMemoryBound(to: UInt8.self), &written, plaintext.u8, UInt64(plaintext.count),
            aad.u8, UInt64(aad.count), nil, nonce.u8, key.u8)
        guard rc == 0 else { throw .messageTooLong(maximum: reportedMaximum, actual: plaintext.count) }
        return needed
    }

    /// Verifies and decrypts ciphertext || tag into `output`; returns the plaintext length.
    /// On failure libsodium wipes the output bytes it wrote.
    @inlinable
    func open(
        _ ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try checkParameters(key: key, nonce: nonce)
        guard ciphertext.count >= tagByteCount else {
            throw .ciphertextTooShort(minimum: tagByteCount, actual: ciphertext.count)
        }
        let needed = ciphertext.count - tagByteCount
        guard UInt64(needed) <= maximumMessageByteCount else {
            throw .messageTooLong(maximum: reportedMaximum, actual: needed)
        }
        guard output.count >= needed else { throw .bufferTooSmall(required: needed, actual: output.count) }
        var written: UInt64 = 0
        let rc = decrypt(
            output.u8, &written, nil, ciphertext.u8, UInt64(ciphertext.count),
            aad.u8, UInt64(aad.count), nonce.u8, key.u8)
        guard rc == 0 else { throw .authenticationFailure }
        return needed
    }

    /// `seal` into a new array.
    @inlinable
    func seal(
        _ plaintext: [UInt8], key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard UInt64(plaintext.count) <= maximumMessageByteCount else {
            throw .messageTooLong(maximum: reportedMaximum, actual: plaintext.count)
        }
        // The result is written in place (no zero-fill, no intermediate copy).
        return try [UInt8](uninitializedCount: plaintext.count + tagByteCount) { (out) throws(CryptoError) -> Int in
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

    /// `open` into a new array.
    @inlinable
    func open(
        _ ciphertext: [UInt8], key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard ciphertext.count >= tagByteCount else {
            throw .ciphertextTooShort(minimum: tagByteCount, actual: ciphertext.count)
        }
        return try [UInt8](uninitializedCount: ciphertext.count - tagByteCount) { (out) throws(CryptoError) -> Int in
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
}
