import SignalPrimitives

/// The AEAD step shared by the Double Ratchet (SPEC §4), sender keys (§5) and
/// self-encryption (§6): an AEAD over the padded plaintext (§2) — AES-256-GCM for the ratchet
/// and sender keys, XChaCha20-Poly1305 for self-encryption — and its inverse, which
/// verifies, decrypts and removes the padding. Also the key-and-nonce derivation the ratchet
/// and sender keys share: `HKDF(ZERO32, mk, info, 44)`, key = [0, 32), nonce = [32, 44).
///
/// Padded plaintexts only ever live in buffers that are wiped: a wiped scratch buffer while
/// sealing, and while opening the array that is returned, whose bytes beyond the plaintext
/// are wiped (and which is wiped whole when the padding is invalid).
enum PaddedAEAD {
    /// The AEAD under the padding; both append a 16-byte tag.
    enum Cipher {
        /// AES-256-GCM, 12-byte nonce (SPEC §1 AEAD).
        case aes256gcm
        /// XChaCha20-Poly1305-IETF, 24-byte nonce (SPEC §1 XAEAD).
        case xchacha20poly1305

        @inline(__always)
        func seal(
            _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
        ) throws(CryptoError) -> Int {
            switch self {
            case .aes256gcm: return try AES256GCM.seal(plaintext, key: key, nonce: nonce, authenticating: aad, into: output)
            case .xchacha20poly1305:
                return try XChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, authenticating: aad, into: output)
            }
        }

        @inline(__always)
        func open(
            _ ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
        ) throws(CryptoError) -> Int {
            switch self {
            case .aes256gcm: return try AES256GCM.open(ciphertext, key: key, nonce: nonce, authenticating: aad, into: output)
            case .xchacha20poly1305:
                return try XChaCha20Poly1305.open(ciphertext, key: key, nonce: nonce, authenticating: aad, into: output)
            }
        }
    }

    /// Bytes of the tag both ciphers append.
    static let tagByteCount = 16

    /// Bytes of derived key material: a 32-byte AES-256-GCM key and a 12-byte nonce.
    static let keyAndNonceByteCount = AES256GCM.keyByteCount + AES256GCM.nonceByteCount

    /// Writes `HKDF(ZERO32, messageKey, info, 44)` (key || nonce) into `output` (44 bytes).
    @inline(__always)
    static func deriveKeyAndNonce(
        messageKey: UnsafeRawBufferPointer, info: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) {
        info.withUnsafeBytes { info in
            // 44 bytes is far below HKDF's 8160-byte limit: the call cannot fail.
            try? ZeroSaltHKDF.extractor.deriveKey(inputKeyMaterial: messageKey, info: info, into: output)
        }
    }

    /// Calls `body` with the key [0, 32) and the nonce [32, 44) of derived key material.
    @inline(__always)
    static func withKeyAndNonce<R, E: Error>(
        in material: UnsafeRawBufferPointer,
        _ body: (_ key: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try body(material.slice(0 ..< AES256GCM.keyByteCount),
                 material.slice(AES256GCM.keyByteCount ..< keyAndNonceByteCount))
    }

    /// Pads `plaintext` (SPEC §2, with `contentType` as its first byte) in a wiped scratch
    /// buffer and seals it into `output` (ciphertext || tag). `output` is exactly
    /// `MessagePadding.checkedPaddedLength(forPlaintextCount:) + 16` bytes long: the caller
    /// checked the length before building its message.
    /// - Throws: `SessionError.primitive` when the AEAD fails (AES-GCM unavailable on this CPU), and
    ///   `SessionError.invalidMessage` when `output` cannot hold the padded plaintext.
    @inline(__always)
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, cipher: Cipher = .aes256gcm,
        contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) {
        let paddedCount = output.count - tagByteCount
        let fillCount = paddedCount - plaintext.count - MessagePadding.overhead
        guard fillCount >= 0, UInt64(fillCount) <= UInt64(UInt32.max) else { throw .invalidMessage }
        try withSecretScratch(paddedCount) { (padded: UnsafeMutableRawBufferPointer) throws(SessionError) in
            MessagePadding.write(plaintext, fillCount: fillCount, contentType: contentType, into: padded)
            do throws(CryptoError) {
                _ = try cipher.seal(UnsafeRawBufferPointer(padded), key: key, nonce: nonce, authenticating: aad, into: output)
            } catch {
                throw .primitive(error)
            }
        }
    }

    /// Verifies and decrypts `ciphertext` (ciphertext || tag), then removes the padding in
    /// place, expecting `contentType` as its first byte: the plaintext is moved to the front of
    /// the decrypted buffer and the bytes after it are wiped, so no copy of the padded
    /// plaintext is left behind.
    /// - Throws: `SessionError.invalidMessage` for a ciphertext shorter than a tag or a tag that
    ///   does not verify (before any padding is looked at), `SessionError.invalidPadding` when
    ///   the authentic plaintext does not unpad or has another content type (the decrypted
    ///   bytes are wiped first), and `SessionError.primitive` when AES-GCM is unavailable.
    @inline(__always)
    static func open(
        _ ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, cipher: Cipher = .aes256gcm,
        contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> [UInt8] {
        let paddedCount = ciphertext.count - tagByteCount
        guard paddedCount >= 0 else { throw .invalidMessage }
        return try [UInt8](uninitializedCount: paddedCount) { (padded) throws(SessionError) -> Int in
            do throws(CryptoError) {
                // On failure libsodium wipes what it wrote: nothing to clean up here.
                _ = try cipher.open(ciphertext, key: key, nonce: nonce, authenticating: aad, into: padded)
            } catch {
                throw SessionError(error)
            }
            let range: Range<Int>
            do throws(SessionError) {
                range = try MessagePadding.plaintextRange(in: UnsafeRawBufferPointer(padded), contentType: contentType)
            } catch {
                SecureMemory.zero(padded)
                throw error
            }
            if let base = padded.baseAddress, !range.isEmpty {
                base.copyMemory(from: base + range.lowerBound, byteCount: range.count)   // overlapping: memmove
            }
            SecureMemory.zero(padded.slice(range.count ..< paddedCount))
            return range.count
        }
    }
}
