import SignalPrimitives

/// A KEM prekey (SPEC §3): an ML-KEM-768 key pair kept as its 64-byte seed, with a u32 id and
/// the identity key's signature `Ed25519.sign(IK, "SessionKit KEM v2" || EncodeKEM(ek))`.
///
/// Like Signal's, a KEM prekey is either one-time (deleted in the same store write as the
/// session it created, like a one-time prekey) or last resort (kept until it is rotated out
/// together with its signed prekey). The initiator cannot tell which.
@_spi(Testing) public struct KEMPreKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Whether a KEM prekey is used once or kept until rotation.
    public enum Kind: UInt8, Sendable, Hashable {
        /// Deleted after its first use.
        case oneTime = 1
        /// Published when no one-time KEM prekey is left; kept until rotated out.
        case lastResort = 2
    }

    /// The id published in bundles and named by prekey messages (KEM prekey ids are their own
    /// series, looked up apart from signed and one-time prekey ids).
    public let id: UInt32
    /// One-time or last resort.
    public let kind: Kind
    /// The seed `d || z` (64 bytes): the private key.
    let seed: SecureBytes
    /// The encapsulation key `ek`.
    public let publicKey: KEMEncapsulationKey
    /// The 64-byte signature over `signedBytes(publicKey:)`.
    public let signature: [UInt8]

    /// Generates a new KEM prekey: a random seed, its encapsulation key from `kem`, signed by
    /// `identity`.
    /// - Throws: the errors of `kem.encapsulationKey(fromSeed:)`.
    public init(
        id: UInt32, kind: Kind, signedBy identity: IdentityKeyPair, kem: some KeyEncapsulationMechanism,
        using random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) {
        let seed = SecureBytes(count: KEMSeed.byteCount) { random.fill($0) }
        let publicKey = try kem.encapsulationKey(fromSeed: seed)
        self.init(validatedID: id, kind: kind, seed: seed, publicKey: publicKey,
                  signature: identity.privateKey.signature(for: Self.signedBytes(publicKey: publicKey.rawRepresentation)))
    }

    /// A KEM prekey from a given seed, its encapsulation key computed by `kem` and signed now by
    /// `identity` (Ed25519 signatures are deterministic; for tests and vectors).
    /// - Throws: `SessionError.invalidKey` for a seed that is not 64 bytes, the errors of `kem`.
    public init(
        id: UInt32, kind: Kind, seed: [UInt8], signedBy identity: IdentityKeyPair, kem: some KeyEncapsulationMechanism
    ) throws(SessionError) {
        guard seed.count == KEMSeed.byteCount else { throw .invalidKey }
        let storage = SecureBytes(copying: seed)
        let publicKey = try kem.encapsulationKey(fromSeed: storage)
        self.init(validatedID: id, kind: kind, seed: storage, publicKey: publicKey,
                  signature: identity.privateKey.signature(for: Self.signedBytes(publicKey: publicKey.rawRepresentation)))
    }

    /// Loads a KEM prekey from its parts. Neither the signature nor the agreement of `publicKey`
    /// with `seed` is checked here (a responder only uses its own keys).
    /// - Throws: `SessionError.invalidKey` for a seed that is not 64 bytes,
    ///   `SessionError.invalidSignature` for a signature that is not 64 bytes.
    public init(id: UInt32, kind: Kind, seed: SecureBytes, publicKey: KEMEncapsulationKey, signature: [UInt8]) throws(SessionError) {
        guard seed.count == KEMSeed.byteCount else { throw .invalidKey }
        guard signature.count == Ed25519.signatureByteCount else { throw .invalidSignature }
        self.init(validatedID: id, kind: kind, seed: seed, publicKey: publicKey, signature: signature)
    }

    private init(validatedID id: UInt32, kind: Kind, seed: SecureBytes, publicKey: KEMEncapsulationKey, signature: [UInt8]) {
        self.id = id
        self.kind = kind
        self.seed = seed
        self.publicKey = publicKey
        self.signature = signature
    }

    /// `"SessionKit KEM v2" || EncodeKEM(ek)`: what the identity key signs.
    public static func signedBytes(publicKey: some Collection<UInt8>) -> [UInt8] {
        ProtocolInfo.kemPreKeySignature + [KEMEncapsulationKey.encodingTypeByte] + publicKey
    }

    /// Calls `body` with the 64-byte seed. Do not let the pointer escape.
    public func withUnsafeSeedBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try seed.withUnsafeBytes(body)
    }

    /// A redacted description: id and kind only.
    public var description: String { "KEMPreKey(id: \(id), \(kind), secret redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
}
