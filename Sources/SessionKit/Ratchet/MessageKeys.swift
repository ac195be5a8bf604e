import SignalPrimitives

/// A message key mk as produced by KDF_CK (SPEC §4); kept in zeroing storage when it has to
/// be stored as a skipped key.
struct MessageKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Length of mk.
    static let byteCount = 32
    /// The 32 secret bytes.
    let storage: SecureBytes

    /// A redacted description.
    var description: String { "MessageKey(redacted)" }
    /// A redacted description.
    var debugDescription: String { description }
}

/// MSGKEYS(mk) = HKDF(ZERO32, mk, "SessionKit MessageKeys v2", 44) → AES-256-GCM key [0,32)
/// and nonce [32,44) (SPEC §4), and the AEAD operations under them (`PaddedAEAD`). The derived
/// keys live only in a wiped scratch buffer for the duration of one seal or open.
enum MessageKeys {
    /// Bytes of MSGKEYS output: 32 key bytes and a 12-byte nonce.
    static let byteCount = PaddedAEAD.keyAndNonceByteCount

    /// Calls `body` with the key and nonce derived from `messageKey`.
    @inlinable
    static func withKeys<R, E: Error>(
        messageKey: UnsafeRawBufferPointer,
        _ body: (_ key: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try withSecretScratch(byteCount) { (okm: UnsafeMutableRawBufferPointer) throws(E) -> R in
            PaddedAEAD.deriveKeyAndNonce(messageKey: messageKey, info: ProtocolInfo.messageKeys, into: okm)
            return try PaddedAEAD.withKeyAndNonce(in: UnsafeRawBufferPointer(okm), body)
        }
    }

    /// Pads `plaintext` (with `contentType` as its first byte) and seals it under MSGKEYS(mk)
    /// into `output` (ciphertext || tag), which is exactly the padded length + 16 bytes.
    /// - Throws: `SessionError.primitive` when AES-GCM is unavailable or the message too long.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, messageKey: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) {
        try withKeys(messageKey: messageKey) { (key, nonce) throws(SessionError) in
            try PaddedAEAD.seal(plaintext, key: key, nonce: nonce, authenticating: aad, into: output, contentType: contentType)
        }
    }

    /// Opens `ciphertext` (ciphertext || tag) under MSGKEYS(mk) and removes the padding,
    /// expecting `contentType` as its first byte.
    /// - Throws: `SessionError.invalidMessage` when the tag does not verify,
    ///   `SessionError.invalidPadding` when the authentic plaintext does not unpad or has
    ///   another content type, `SessionError.primitive` when AES-GCM is unavailable.
    static func open(
        _ ciphertext: UnsafeRawBufferPointer, messageKey: UnsafeRawBufferPointer,
        authenticating aad: UnsafeRawBufferPointer, contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> [UInt8] {
        try withKeys(messageKey: messageKey) { (key, nonce) throws(SessionError) in
            try PaddedAEAD.open(ciphertext, key: key, nonce: nonce, authenticating: aad, contentType: contentType)
        }
    }
}
