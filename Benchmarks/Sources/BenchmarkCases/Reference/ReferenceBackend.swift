/// The primitives a naive reference implementation of the protocol needs, written once per
/// backend: raw libsodium calls (`SodiumBackend`, the floor) and swift-crypto
/// (`SwiftCryptoBackend`).
///
/// The protocol steps of SPEC §3–§7 are written once, generically over this protocol
/// (`ReferenceX3DH`, `ReferenceRatchet`, `ReferenceSenderKey`, `ReferenceSafetyNumber`,
/// `ReferenceSessionCodec`), so the two references differ only in the primitives. Each
/// primitive is a single naive call: HMAC keys its state on every call, HKDF re-keys for every
/// block, nothing is precomputed. Inputs and outputs are caller buffers, so the composition
/// itself allocates only where the protocol produces new bytes (messages, plaintexts).
protocol ReferenceBackend: SendableMetatype {
    /// An Ed25519 signing key in the backend's own form.
    associatedtype SigningKey
    /// An Ed25519 public key prepared for verification in the backend's own form.
    associatedtype VerifyingKey
    /// An X25519 private key in the backend's own form (with its public key computed once).
    associatedtype AgreementKey

    /// HMAC-SHA256 of `message` under a 32-byte `key`, into 32 bytes of `output`.
    static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)

    /// RFC 5869 HKDF-SHA256 filling `output` (at most 255 × 32 bytes).
    static func hkdfSHA256(
        salt: UnsafeRawBufferPointer, inputKeyMaterial: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer)

    /// SHA-256 of `message` into 32 bytes of `output`.
    static func sha256(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)

    /// SHA-512 of `message` into 64 bytes of `output`.
    static func sha512(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)

    /// AES-256-GCM: ciphertext || tag (plaintext.count + 16 bytes) into `output`.
    static func aesGCMSeal(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ReferenceError)

    /// AES-256-GCM open of ciphertext || tag; the plaintext (count − 16 bytes) into `output`.
    /// Throws `invalidMessage` when the tag does not verify.
    static func aesGCMOpen(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ReferenceError)

    /// A new random X25519 key pair.
    static func newAgreementKey() -> (key: AgreementKey, publicKey: [UInt8])

    /// The X25519 key of 32 secret bytes, with its public key X25519(secret, 9).
    static func agreementKey(secret: [UInt8]) throws(ReferenceError) -> (key: AgreementKey, publicKey: [UInt8])

    /// A stored key pair, restored without recomputing what the backend lets it skip.
    static func restoreAgreementKey(secret: [UInt8], publicKey: [UInt8]) throws(ReferenceError) -> AgreementKey

    /// The 32 secret bytes of a key (for serialization).
    static func secretBytes(of key: AgreementKey) -> [UInt8]

    /// X25519(secret, publicKey) from 32 raw secret bytes (used once, so not kept in the
    /// backend's key form); an all-zero result is `invalidKey`.
    static func x25519(
        secret: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError)

    /// X25519(key, publicKey) into 32 bytes of `output`; an all-zero result is `invalidKey`.
    static func x25519(
        _ key: AgreementKey, publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError)

    /// The Ed25519 signing key of a 32-byte seed.
    static func signingKey(seed: [UInt8]) throws(ReferenceError) -> SigningKey

    /// The 32-byte Ed25519 public key of a signing key.
    static func publicKey(of key: SigningKey) -> [UInt8]

    /// A 64-byte Ed25519 signature of `message` into `output`.
    static func sign(_ message: UnsafeRawBufferPointer, with key: SigningKey, into output: UnsafeMutableRawBufferPointer)

    /// An Ed25519 public key for verification (`invalidKey` when the backend refuses it).
    static func verifyingKey(_ publicKey: [UInt8]) throws(ReferenceError) -> VerifyingKey

    /// Whether `signature` is valid for `message` under `key`.
    static func verify(_ signature: UnsafeRawBufferPointer, of message: UnsafeRawBufferPointer, with key: VerifyingKey) -> Bool

    /// SPEC §1 ed→x public: u = (1 + y)/(1 − y) of a valid point, else `invalidKey`.
    static func ed25519PublicKeyToX25519(_ publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ReferenceError)

    /// SPEC §1 ed→x private: SHA-512(seed)[0..<32], clamped, into 32 bytes of `output`.
    static func ed25519SeedToX25519Secret(_ seed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)

    /// Whether two byte strings are equal, in time that depends only on their length (the
    /// sender-key commitment check).
    static func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool
}

/// A backend with XChaCha20-Poly1305 (SPEC §6's XAEAD) and a CSPRNG for its nonces. Only the
/// floor has one: swift-crypto offers no XChaCha20-Poly1305 (its `ChaChaPoly` takes 12-byte
/// nonces), so self-encryption has no swift-crypto column.
protocol ReferenceXAEADBackend: ReferenceBackend {
    /// XChaCha20-Poly1305-IETF: ciphertext || tag (plaintext.count + 16 bytes) into `output`.
    static func xchachaSeal(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ReferenceError)

    /// XChaCha20-Poly1305-IETF open of ciphertext || tag into `output` (count − 16 bytes);
    /// `invalidMessage` when the tag does not verify.
    static func xchachaOpen(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ReferenceError)

    /// Fills `output` from the CSPRNG.
    static func randomBytes(into output: UnsafeMutableRawBufferPointer)
}

/// The SPEC §8 error names the references can raise.
enum ReferenceError: Error, Equatable {
    case invalidKey, invalidSignature, invalidMessage, duplicateMessage, tooManySkippedMessages
    case unknownChain, invalidPadding, unsupportedVersion, chainExhausted, invalidPayload
    case unknownPreKey, noSession, messageKeyUnavailable
}
