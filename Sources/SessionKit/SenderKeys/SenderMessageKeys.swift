import SignalPrimitives

/// The AEAD key and nonce of one sender-key message (SPEC §5):
/// `(key, nonce) = HKDF(ZERO32, mk, "SessionKit SenderKey v1", 44)`, key = [0, 32), nonce = [32, 44).
struct SenderMessageKeys: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The HKDF output length: a 32-byte key and a 12-byte nonce.
    static let materialByteCount = AES256GCM.keyByteCount + AES256GCM.nonceByteCount

    /// Key || nonce, 44 bytes.
    private let material: SecureBytes

    /// Expands the message key `mk`.
    init(messageKey mk: SecureBytes) {
        material = SecureBytes(count: Self.materialByteCount) { (out: UnsafeMutableRawBufferPointer) in
            mk.withUnsafeBytes { ikm in
                ProtocolInfo.senderKey.withUnsafeBytes { info in
                    // 44 bytes is far below HKDF's 8160-byte limit, so this cannot fail.
                    try? ZeroSaltHKDF.extractor.deriveKey(inputKeyMaterial: ikm, info: info, into: out)
                }
            }
        }
    }

    /// Calls `body` with the key and the nonce.
    private func withKeyAndNonce<R, E: Error>(
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try material.withUnsafeBytes { (all: UnsafeRawBufferPointer) throws(E) -> R in
            try body(UnsafeRawBufferPointer(rebasing: all[0 ..< AES256GCM.keyByteCount]),
                     UnsafeRawBufferPointer(rebasing: all[AES256GCM.keyByteCount ..< Self.materialByteCount]))
        }
    }

    /// Encrypts `padded` into `output` (ciphertext || tag) with `aad`.
    /// - Throws: `SessionError.primitive` when AES-GCM fails (for example unavailable on this CPU).
    func seal(_ padded: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
              into output: UnsafeMutableRawBufferPointer) throws(SessionError) {
        do {
            _ = try withKeyAndNonce { (key, nonce) throws(CryptoError) in
                try AES256GCM.seal(padded, key: key, nonce: nonce, authenticating: aad, into: output)
            }
        } catch {
            throw .primitive(error)
        }
    }

    /// Verifies and decrypts ciphertext || tag, returning the padded plaintext.
    /// - Throws: `SessionError.invalidMessage` when the tag does not verify.
    func open(_ ciphertext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer) throws(SessionError) -> [UInt8] {
        guard ciphertext.count >= AES256GCM.tagByteCount else { throw .invalidMessage }
        var padded = [UInt8](repeating: 0, count: ciphertext.count - AES256GCM.tagByteCount)
        do {
            _ = try withKeyAndNonce { (key, nonce) throws(CryptoError) in
                try padded.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                    try AES256GCM.open(ciphertext, key: key, nonce: nonce, authenticating: aad, into: out)
                }
            }
        } catch {
            throw SessionError(error)
        }
        return padded
    }

    /// A redacted description.
    var description: String { "SenderMessageKeys(redacted)" }
    /// A redacted description.
    var debugDescription: String { description }
}
