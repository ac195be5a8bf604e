import SignalPrimitives

/// A signed prekey (SPEC §3): an X25519 key pair with a u32 id and the identity key's
/// signature `Ed25519.sign(IK, "SessionKit SPK v2" || Encode(SPK) || u8(kem))`.
///
/// `kem` (`signsKEMPreKeys`) is set once, when the key is signed: a responder that publishes
/// KEM prekeys signs its signed prekeys with `kem` = 1 and publishes every bundle of such a
/// key with a KEM prekey, so a server that strips the KEM prekey breaks the signature.
@_spi(Testing) public struct SignedPreKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The id published in bundles and named by prekey messages.
    public let id: UInt32
    /// The X25519 private key.
    public let privateKey: X25519.PrivateKey
    /// The 64-byte signature over `signedBytes(publicKey:signsKEMPreKeys:)`.
    public let signature: [UInt8]
    /// The signed `kem` bit: whether this key's bundles carry a KEM prekey.
    public let signsKEMPreKeys: Bool

    /// The X25519 public key (SPK).
    public var publicKey: X25519.PublicKey { privateKey.publicKey }

    /// Generates a new signed prekey with `id`, signed by `identity` with the `kem` bit
    /// `signsKEMPreKeys`.
    /// - Throws: `SessionError.primitive` when libsodium is unusable.
    public init(
        id: UInt32, signedBy identity: IdentityKeyPair, signsKEMPreKeys: Bool = false,
        using random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) {
        do { privateKey = try X25519.PrivateKey(using: random) } catch { throw SessionError.primitive(error) }
        self.id = id
        self.signsKEMPreKeys = signsKEMPreKeys
        signature = identity.privateKey.signature(for: Self.signedBytes(publicKey: privateKey.publicKey, signsKEMPreKeys: signsKEMPreKeys))
    }

    /// A signed prekey from a given private key, signed now by `identity` (Ed25519 signatures
    /// are deterministic, so this reproduces a published signature; for tests and vectors).
    /// - Throws: `SessionError.invalidKey` for a private key that is not 32 bytes.
    public init(id: UInt32, privateKey: [UInt8], signedBy identity: IdentityKeyPair, signsKEMPreKeys: Bool) throws(SessionError) {
        let key: X25519.PrivateKey
        do { key = try X25519.PrivateKey(rawRepresentation: privateKey) } catch { throw .invalidKey }
        self.init(id: id, privateKey: key, signature: identity.privateKey.signature(
            for: Self.signedBytes(publicKey: key.publicKey, signsKEMPreKeys: signsKEMPreKeys)), signsKEMPreKeys: signsKEMPreKeys)
    }

    /// Loads a signed prekey from its parts. The signature is not checked here: it is the
    /// initiator who verifies it, and a responder only uses its own keys.
    /// - Throws: `SessionError.invalidKey` for a private key that is not 32 bytes,
    ///   `SessionError.invalidSignature` for a signature that is not 64 bytes.
    public init(id: UInt32, privateKey: [UInt8], signature: [UInt8], signsKEMPreKeys: Bool) throws(SessionError) {
        guard signature.count == Ed25519.signatureByteCount else { throw .invalidSignature }
        do { self.privateKey = try X25519.PrivateKey(rawRepresentation: privateKey) } catch { throw .invalidKey }
        self.id = id
        self.signature = signature
        self.signsKEMPreKeys = signsKEMPreKeys
    }

    /// Assembles a signed prekey from a loaded private key and a 64-byte signature.
    init(id: UInt32, privateKey: X25519.PrivateKey, signature: [UInt8], signsKEMPreKeys: Bool) {
        self.id = id
        self.privateKey = privateKey
        self.signature = signature
        self.signsKEMPreKeys = signsKEMPreKeys
    }

    /// `"SessionKit SPK v2" || Encode(publicKey) || u8(kem)`: what the identity key signs.
    public static func signedBytes(publicKey: X25519.PublicKey, signsKEMPreKeys: Bool) -> [UInt8] {
        ProtocolInfo.signedPreKeySignature + publicKey.signalEncoding + [signsKEMPreKeys ? 1 : 0]
    }

    /// Whether `signature` verifies under `identityKey` (strict libsodium verification).
    public func hasValidSignature(from identityKey: Ed25519.PublicKey) -> Bool {
        identityKey.isValidSignature(signature, for: Self.signedBytes(publicKey: publicKey, signsKEMPreKeys: signsKEMPreKeys))
    }

    /// A redacted description: id and public key only.
    public var description: String {
        "SignedPreKey(id: \(id), public: \(publicKey.hexString), kem: \(signsKEMPreKeys), secret redacted)"
    }
    /// A redacted description: id and public key only.
    public var debugDescription: String { description }
}
