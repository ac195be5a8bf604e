/// The checks every libsodium combined-mode AEAD needs before it is called (ciphertext || tag,
/// a fixed key and nonce length, and a maximum message length above which libsodium aborts the
/// process with `sodium_misuse` instead of returning an error), shared by `AES256GCM`,
/// `ChaCha20Poly1305` and `XChaCha20Poly1305`, which then call their own C function directly.
///
/// Lengths are compared as `UInt64`: a libsodium maximum is a `size_t` that Swift imports as
/// `Int` and that may not fit in one (XChaCha20's is above `Int.max` on 64-bit platforms, and
/// `Int(size_t)` would trap on watchOS's arm64_32).
@usableFromInline
enum SodiumAEAD {
    /// A libsodium `*_messagebytes_max()` value (a `size_t` imported as `Int`) as unsigned.
    @inlinable
    static func maximum(_ messageBytesMax: Int) -> UInt64 { UInt64(UInt(bitPattern: messageBytesMax)) }

    /// Throws unless libsodium accepts a message of `count` bytes. Every libsodium maximum is
    /// at least 2^31 bytes, so shorter messages pass without asking libsodium.
    @inlinable
    static func checkMessageLength(_ count: Int, messageBytesMax: () -> Int) throws(CryptoError) {
        guard UInt64(count) >= 1 << 31 else { return }
        let limit = maximum(messageBytesMax())
        guard UInt64(count) <= limit else { throw .messageTooLong(maximum: Int(clamping: limit), actual: count) }
    }

    /// The key and nonce lengths.
    @inlinable
    static func checkKeyAndNonce(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, keyByteCount: Int, nonceByteCount: Int
    ) throws(CryptoError) {
        guard key.count == keyByteCount else { throw .invalidKeyLength(expected: keyByteCount, actual: key.count) }
        guard nonce.count == nonceByteCount else { throw .invalidNonceLength(expected: nonceByteCount, actual: nonce.count) }
    }

    /// Everything a seal checks; returns the bytes it will write (plaintext + tag).
    @inlinable
    static func checkSeal(
        plaintextCount: Int, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, outputCount: Int,
        keyByteCount: Int, nonceByteCount: Int, tagByteCount: Int, messageBytesMax: () -> Int
    ) throws(CryptoError) -> Int {
        try checkKeyAndNonce(key: key, nonce: nonce, keyByteCount: keyByteCount, nonceByteCount: nonceByteCount)
        try checkMessageLength(plaintextCount, messageBytesMax: messageBytesMax)
        let needed = plaintextCount + tagByteCount
        guard outputCount >= needed else { throw .bufferTooSmall(required: needed, actual: outputCount) }
        return needed
    }

    /// Everything an open checks; returns the plaintext length it will write.
    @inlinable
    static func checkOpen(
        ciphertextCount: Int, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, outputCount: Int,
        keyByteCount: Int, nonceByteCount: Int, tagByteCount: Int, messageBytesMax: () -> Int
    ) throws(CryptoError) -> Int {
        try checkKeyAndNonce(key: key, nonce: nonce, keyByteCount: keyByteCount, nonceByteCount: nonceByteCount)
        guard ciphertextCount >= tagByteCount else { throw .ciphertextTooShort(minimum: tagByteCount, actual: ciphertextCount) }
        let needed = ciphertextCount - tagByteCount
        try checkMessageLength(needed, messageBytesMax: messageBytesMax)
        guard outputCount >= needed else { throw .bufferTooSmall(required: needed, actual: outputCount) }
        return needed
    }

    /// A new array of `count` bytes filled by `body` with buffers of `key`, `input`, `nonce`
    /// and `aad` (the array forms of seal and open).
    @inlinable
    static func array(
        count: Int, key: SymmetricKey, input: [UInt8], nonce: [UInt8], aad: [UInt8],
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer,
                 UnsafeMutableRawBufferPointer) throws(CryptoError) -> Int
    ) throws(CryptoError) -> [UInt8] {
        // The result is written in place (no zero-fill, no intermediate copy).
        try [UInt8](uninitializedCount: count) { (out) throws(CryptoError) -> Int in
            // One Result from the innermost call: the buffer accesses themselves cannot fail.
            let written: Result<Int, CryptoError> = key.withUnsafeBytes { k in
                input.withUnsafeBytes { i in
                    nonce.withUnsafeBytes { n in
                        aad.withUnsafeBytes { a in Result { () throws(CryptoError) in try body(k, i, n, a, out) } }
                    }
                }
            }
            return try written.get()
        }
    }
}
