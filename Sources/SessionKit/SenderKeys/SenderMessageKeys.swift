import SignalPrimitives

/// The AEAD key and nonce of one sender-key message (SPEC §5):
/// `(key, nonce) = HKDF(ZERO32, mk, "SessionKit SenderKey v1", 44)`, key = [0, 32), nonce = [32, 44).
struct SenderMessageKeys: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The HKDF output length: a 32-byte key and a 12-byte nonce.
    static let materialByteCount = PaddedAEAD.keyAndNonceByteCount

    /// Key || nonce, 44 bytes.
    private let material: SecureBytes

    /// Expands the message key `mk`.
    init(messageKey mk: SecureBytes) {
        material = SecureBytes(count: Self.materialByteCount) { (out: UnsafeMutableRawBufferPointer) in
            mk.withUnsafeBytes { PaddedAEAD.deriveKeyAndNonce(messageKey: $0, info: ProtocolInfo.senderKey, into: out) }
        }
    }

    /// Pads `plaintext` and encrypts it into `output` (ciphertext || tag, exactly the padded
    /// length + 16 bytes) with `aad`.
    /// - Throws: `SessionError.primitive` when AES-GCM fails (for example unavailable on this CPU).
    func seal(_ plaintext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
              into output: UnsafeMutableRawBufferPointer) throws(SessionError) {
        try material.withUnsafeBytes { (material: UnsafeRawBufferPointer) throws(SessionError) in
            try PaddedAEAD.withKeyAndNonce(in: material) { (key, nonce) throws(SessionError) in
                try PaddedAEAD.seal(plaintext, key: key, nonce: nonce, authenticating: aad, into: output)
            }
        }
    }

    /// Verifies and decrypts ciphertext || tag and removes the padding.
    /// - Throws: `SessionError.invalidMessage` when the tag does not verify,
    ///   `SessionError.invalidPadding` when the authentic plaintext does not unpad.
    func open(_ ciphertext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer) throws(SessionError) -> [UInt8] {
        try material.withUnsafeBytes { (material: UnsafeRawBufferPointer) throws(SessionError) in
            try PaddedAEAD.withKeyAndNonce(in: material) { (key, nonce) throws(SessionError) in
                try PaddedAEAD.open(ciphertext, key: key, nonce: nonce, authenticating: aad)
            }
        }
    }

    /// A redacted description.
    var description: String { "SenderMessageKeys(redacted)" }
    /// A redacted description.
    var debugDescription: String { description }
}
