import SignalPrimitives

/// The keys a responder publishes so that others can start sessions with it (SPEC §3):
/// IK_B, SPK_B with its id and signature, and optionally one one-time prekey with its id.
///
/// A bundle holds public data only and is taken as received; `X3DH.initiate` validates it
/// (signature first, then key canonicity and the identity key's point).
public struct PreKeyBundle: Sendable, Hashable {
    /// A published one-time prekey.
    public struct OneTimeKey: Sendable, Hashable {
        /// Its id.
        public let id: UInt32
        /// Its X25519 public key (OPK_B).
        public let publicKey: X25519.PublicKey

        /// Creates a published one-time prekey.
        public init(id: UInt32, publicKey: X25519.PublicKey) {
            self.id = id
            self.publicKey = publicKey
        }
    }

    /// The responder's Ed25519 identity key (IK_B).
    public let identityKey: Ed25519.PublicKey
    /// The signed prekey's id.
    public let signedPreKeyID: UInt32
    /// The signed prekey (SPK_B).
    public let signedPreKey: X25519.PublicKey
    /// `Ed25519.sign(IK_B, 0x05 || SPK_B)`, as published (any length; a wrong one fails verification).
    public let signedPreKeySignature: [UInt8]
    /// The one-time prekey, if the server had one left.
    public let oneTimePreKey: OneTimeKey?

    /// Creates a bundle from its published parts.
    public init(
        identityKey: Ed25519.PublicKey, signedPreKeyID: UInt32, signedPreKey: X25519.PublicKey,
        signedPreKeySignature: [UInt8], oneTimePreKey: OneTimeKey?
    ) {
        self.identityKey = identityKey
        self.signedPreKeyID = signedPreKeyID
        self.signedPreKey = signedPreKey
        self.signedPreKeySignature = signedPreKeySignature
        self.oneTimePreKey = oneTimePreKey
    }

    /// The bundle that publishes the public parts of a responder's own prekeys.
    public init(identityKey: Ed25519.PublicKey, signedPreKey: SignedPreKey, oneTimePreKey: OneTimePreKey?) {
        self.init(
            identityKey: identityKey, signedPreKeyID: signedPreKey.id, signedPreKey: signedPreKey.publicKey,
            signedPreKeySignature: signedPreKey.signature,
            oneTimePreKey: oneTimePreKey.map { OneTimeKey(id: $0.id, publicKey: $0.publicKey) })
    }
}
