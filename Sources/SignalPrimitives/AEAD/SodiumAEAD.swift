import CSodium

/// One libsodium combined-mode AEAD (`crypto_aead_*_encrypt` and `_decrypt`): ciphertext ||
/// 16-byte tag, a fixed key and nonce length, and a maximum message length above which
/// libsodium aborts the process (`sodium_misuse`) instead of returning an error.
@usableFromInline
protocol SodiumAEADAlgorithm {
    static var keyByteCount: Int { get }
    static var nonceByteCount: Int { get }
    static var tagByteCount: Int { get }
    /// libsodium's `*_messagebytes_max()`: a `size_t`, which Swift imports as `Int`.
    static func messageBytesMax() -> Int
    static func encrypt(
        _ c: UnsafeMutablePointer<UInt8>, _ clen: UnsafeMutablePointer<UInt64>?, _ m: UnsafePointer<UInt8>, _ mlen: UInt64,
        _ ad: UnsafePointer<UInt8>, _ adlen: UInt64, _ npub: UnsafePointer<UInt8>, _ k: UnsafePointer<UInt8>
    ) -> Int32
    static func decrypt(
        _ m: UnsafeMutablePointer<UInt8>, _ mlen: UnsafeMutablePointer<UInt64>?, _ c: UnsafePointer<UInt8>, _ clen: UInt64,
        _ ad: UnsafePointer<UInt8>, _ adlen: UInt64, _ npub: UnsafePointer<UInt8>, _ k: UnsafePointer<UInt8>
    ) -> Int32
}

/// The checks and calls every libsodium AEAD shares; `AES256GCM` and `XChaCha20Poly1305` are
/// thin wrappers around it (statically dispatched: the C calls are direct).
///
/// Every length is checked here, before libsodium is called, and compared as `UInt64`: the
/// maximum is a `size_t` that may not fit in an `Int` (XChaCha20's is above `Int.max` on 64-bit
/// platforms, and `Int(size_t)` would trap on watchOS's arm64_32).
@usableFromInline
enum SodiumAEAD<Algorithm: SodiumAEADAlgorithm> {
    /// The longest message libsodium accepts.
    @inlinable
    static var maximumMessageByteCount: UInt64 { UInt64(UInt(bitPattern: Algorithm.messageBytesMax())) }

    /// `maximumMessageByteCount` for an error message (clamped to `Int`).
    @inlinable
    static var reportedMaximum: Int { Int(clamping: maximumMessageByteCount) }

    @inlinable
    static func checkParameters(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer) throws(CryptoError) {
        guard key.count == Algorithm.keyByteCount else {
            throw .invalidKeyLength(expected: Algorithm.keyByteCount, actual: key.count)
        }
        guard nonce.count == Algorithm.nonceByteCount else {
            throw .invalidNonceLength(expected: Algorithm.nonceByteCount, actual: nonce.count)
        }
    }

    /// Encrypts `plaintext` into `output` as ciphertext || tag; returns the bytes written.
    @inlinable
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try checkParameters(key: key, nonce: nonce)
        guard UInt64(plaintext.count) <= maximumMessageByteCount else {
            throw .messageTooLong(maximum: reportedMaximum, actual: plaintext.count)
        }
        let needed = plaintext.count + Algorithm.tagByteCount
        guard output.count >= needed, let out = output.baseAddress else {
            throw .bufferTooSmall(required: needed, actual: output.count)
        }
        let rc = Algorithm.encrypt(
            out.assumingMemoryBound(to: UInt8.self), nil, plaintext.u8, UInt64(plaintext.count),
            aad.u8, UInt64(aad.count), nonce.u8, key.u8)
        guard rc == 0 else { throw .messageTooLong(maximum: reportedMaximum, actual: plaintext.count) }
        return needed
    }

    /// Verifies and decrypts ciphertext || tag into `output`; returns the plaintext length.
    /// On failure libsodium wipes the output bytes it wrote.
    @inlinable
    static func open(
        _ ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try checkParameters(key: key, nonce: nonce)
        guard ciphertext.count >= Algorithm.tagByteCount else {
            throw .ciphertextTooShort(minimum: Algorithm.tagByteCount, actual: ciphertext.count)
        }
        let needed = ciphertext.count - Algorithm.tagByteCount
        guard UInt64(needed) <= maximumMessageByteCount else {
            throw .messageTooLong(maximum: reportedMaximum, actual: needed)
        }
        guard output.count >= needed else { throw .bufferTooSmall(required: needed, actual: output.count) }
        let rc = Algorithm.decrypt(
            output.u8, nil, ciphertext.u8, UInt64(ciphertext.count), aad.u8, UInt64(aad.count), nonce.u8, key.u8)
        guard rc == 0 else { throw .authenticationFailure }
        return needed
    }

    /// `seal` into a new array.
    @inlinable
    static func seal(
        _ plaintext: [UInt8], key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard UInt64(plaintext.count) <= maximumMessageByteCount else {
            throw .messageTooLong(maximum: reportedMaximum, actual: plaintext.count)
        }
        // The result is written in place (no zero-fill, no intermediate copy).
        return try [UInt8](uninitializedCount: plaintext.count + Algorithm.tagByteCount) { (out) throws(CryptoError) -> Int in
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
    static func open(
        _ ciphertext: [UInt8], key: SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard ciphertext.count >= Algorithm.tagByteCount else {
            throw .ciphertextTooShort(minimum: Algorithm.tagByteCount, actual: ciphertext.count)
        }
        return try [UInt8](uninitializedCount: ciphertext.count - Algorithm.tagByteCount) { (out) throws(CryptoError) -> Int in
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
