import SignalPrimitives

/// The AEAD key, nonce and commitment of one sender-key message (SPEC §5):
/// `(key, nonce, commit) = HKDF(ZERO32, mk, "SessionKit SenderKey v2", 76)`,
/// key = [0, 32), nonce = [32, 44), commit = [44, 76).
///
/// `commit` makes a message key-committing: a receiver compares it (in constant time) with the
/// one the message carries before any AEAD work, so one ciphertext cannot open to different
/// plaintexts for members given different chain keys under one chain id.
struct SenderMessageKeys: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The HKDF output length: a 32-byte key, a 12-byte nonce and a 32-byte commitment.
    static let materialByteCount = PaddedAEAD.keyAndNonceByteCount + commitmentByteCount
    /// Bytes of the commitment.
    static let commitmentByteCount = 32

    /// Key || nonce || commit, 76 bytes.
    private let material: SecureBytes

    /// Expands the message key `mk`.
    init(messageKey mk: SecureBytes) {
        material = SecureBytes(count: Self.materialByteCount) { (out: UnsafeMutableRawBufferPointer) in
            mk.withUnsafeBytes { PaddedAEAD.deriveKeyAndNonce(messageKey: $0, info: ProtocolInfo.senderKey, into: out) }
        }
    }

    /// Writes the 32-byte commitment into `output`.
    func writeCommitment(into output: UnsafeMutableRawBufferPointer) {
        material.withUnsafeBytes { output.copyMemory(from: $0.slice(PaddedAEAD.keyAndNonceByteCount ..< Self.materialByteCount)) }
    }

    /// Whether `commitment` equals this message key's (compared in constant time).
    func commitmentMatches(_ commitment: UnsafeRawBufferPointer) -> Bool {
        material.withUnsafeBytes {
            ConstantTime.equals($0.slice(PaddedAEAD.keyAndNonceByteCount ..< Self.materialByteCount), commitment)
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
