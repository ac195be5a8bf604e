import SignalPrimitives

extension SessionState {
    /// Starts a session as the initiator (Alice) from the responder's bundle (SPEC §3–§4):
    /// draws the ephemeral key EK_A and then the first ratchet key from `random`.
    /// - Throws: `SessionError.invalidSignature` when the bundle's signature does not verify,
    ///   `SessionError.invalidKey` for an unusable key in the bundle, `.primitive` when
    ///   libsodium is unusable.
    public init(
        initiatingWith bundle: PreKeyBundle, identity: IdentityKeyPair,
        configuration: SessionConfiguration = .default, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) {
        let ephemeralKey: X25519.PrivateKey
        do { ephemeralKey = try X25519.PrivateKey(using: random) } catch { throw SessionError.primitive(error) }
        try self.init(initiatingWith: bundle, identity: identity, ephemeralKey: ephemeralKey, configuration: configuration, random: random)
    }

    /// Starts a session as the initiator with a given ephemeral key EK_A (for deterministic
    /// tests and vectors; EK_A must be fresh and is not kept). X3DH runs first (signature
    /// before anything else); then DHs = a new key from `random`, DHr = SPK_B and
    /// (RK, CKs) = KDF_RK(SK, DH(DHs, SPK_B)). The session sends prekey messages
    /// `0x02 || IK_A || EK_A || u32(spk_id) || flag || [u32(opk_id)] || message` until it
    /// has decrypted a reply.
    /// - Throws: as `init(initiatingWith:identity:configuration:random:)`.
    public init(
        initiatingWith bundle: PreKeyBundle, identity: IdentityKeyPair, ephemeralKey: X25519.PrivateKey,
        configuration: SessionConfiguration = .default, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) {
        let agreement = try X3DH.initiate(identity: identity, bundle: bundle, ephemeralKey: ephemeralKey)
        let ratchet = try DoubleRatchet.initiator(
            sharedSecret: agreement.sharedSecret, remoteSignedPreKey: bundle.signedPreKey, random: random)
        let prefix = PreKeyMessage.Prefix(
            identityKey: identity.publicKey, baseKey: ephemeralKey.publicKey,
            signedPreKeyID: bundle.signedPreKeyID, oneTimePreKeyID: bundle.oneTimePreKey?.id)
        self.init(
            role: .initiator, configuration: configuration, localIdentityKey: identity.publicKey,
            remoteIdentityKey: bundle.identityKey, preKeyPrefix: prefix, sendsPreKeyMessages: true, ratchet: ratchet)
    }
}
