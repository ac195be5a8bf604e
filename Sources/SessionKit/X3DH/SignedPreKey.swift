import SignalPrimitives

/// A signed prekey (SPEC §3): an X25519 key pair with a u32 id and the identity key's
/// signature `Ed25519.sign(IK, 0x05 || SPK)` over its public key.
public struct SignedPreKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The id published in bundles and named by prekey messages.
    public let id: UInt32
    /// The X25519 private key.
    public let privateKey: X25519.PrivateKey
    /// `Ed25519.sign(IK, Encode(publicKey))` (64 bytes).
    public let signature: [UInt8]

    /// The X25519 public key (SPK).
    public var publicKey: X25519.PublicKey { privateKey.publicKey }

    /// Generates a new signed prekey with `id`, signed by `identity`.
    /// - Throws: `SessionError.primitive` when libsodium is unusable.
    public init(id: UInt32, signedBy identity: IdentityKeyPair, using random: any RandomSource = SystemRandomSource()) throws(SessionError) {
        do { privateKey = try X25519.PrivateKey(using: random) } catch { throw SessionError.primitive(error) }
        self.id = id
        signature = identity.signature(forSignedPreKey: privateKey.publicKey)
    }

    /// Loads a signed prekey from its parts. The signature is not checked here: it is the
    /// initiator who verifies it (`X3DH.initiate`), and a responder only uses its own keys.
    /// - Throws: `SessionError.invalidKey` for a private key that is not 32 bytes,
    ///   `SessionError.invalidSignature` for a signature that is not 64 bytes.
    public init(id: UInt32, privateKey: [UInt8], signature: [UInt8]) throws(SessionError) {
        guard signature.count == Ed25519.signatureByteCount else { throw .invalidSignature }
        do { self.privateKey = try X25519.PrivateKey(rawRepresentation: privateKey) } catch { throw .invalidKey }
        self.id = id
        self.signature = signature
    }

    /// Whether `signature` verifies under `identityKey` (strict libsodium verification).
    public func hasValidSignature(from identityKey: Ed25519.PublicKey) -> Bool {
        identityKey.isValidSignature(signature, for: publicKey.signalEncoding)
    }

    /// A redacted description: id and public key only.
    public var description: String { "SignedPreKey(id: \(id), public: \(publicKey.hexString), secret redacted)" }
    /// A redacted description: id and public key only.
    public var debugDescription: String { description }
}
