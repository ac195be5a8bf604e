import SignalPrimitives

extension SessionState {
    /// Starts a session as the initiator (Alice at `localAddress`) with `remoteAddress` from its
    /// bundle (SPEC §3–§4). Checks the bundle first (`X3DH.checkBundle`: signatures, then keys);
    /// then, with a KEM prekey in the bundle, encapsulates to it with `kem`; draws the
    /// ephemeral key EK_A and then the first ratchet key from `random`. `registrationID` is this
    /// installation's (SPEC §9), sent in the prefix (flags bit 2) when given; the session records
    /// the bundle's.
    /// - Throws: `SessionError.invalidSignature` or `.invalidKey` for a bad bundle,
    ///   `.postQuantumRequired` when `configuration.requirePostQuantum` is on and the bundle
    ///   has no KEM prekey, `.kemUnavailable` when it has one and `kem` is `nil`, the errors of
    ///   `kem.encapsulate(to:)`, `.primitive` when libsodium is unusable.
    @_spi(Testing) public init(
        initiatingWith bundle: PreKeyBundle, identity: IdentityKeyPair, localAddress: ProtocolAddress,
        remoteAddress: ProtocolAddress, kem: (any KeyEncapsulationMechanism)?, registrationID: RegistrationID? = nil,
        configuration: SessionConfiguration = .default, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) {
        let kemKey = try Self.checkInitiation(bundle, kemAvailable: kem != nil, configuration: configuration)
        let encapsulation = try kemKey.map { (key) throws(SessionError) -> KEMEncapsulation in
            guard let kem else { throw .kemUnavailable }
            return try kem.encapsulate(to: key)
        }
        let ephemeralKey: X25519.PrivateKey
        do { ephemeralKey = try X25519.PrivateKey(using: random) } catch { throw SessionError.primitive(error) }
        try self.init(
            initiatingWith: bundle, identity: identity, localAddress: localAddress, remoteAddress: remoteAddress,
            ephemeralKey: ephemeralKey, encapsulation: encapsulation, registrationID: registrationID, configuration: configuration,
            random: random)
    }

    /// Starts a session as the initiator with a given ephemeral key EK_A and, for a bundle
    /// with a KEM prekey, a given encapsulation (for deterministic tests and vectors: EK_A
    /// must be fresh and is not kept; the encapsulation must be a fresh one to the bundle's
    /// KEM prekey). X3DH runs first (the bundle's checks before anything else); then DHs = a
    /// new key from `random`, DHr = SPK_B and (RK, CKs) = KDF_RK(SK, DH(DHs, SPK_B)). The
    /// session sends prekey messages `0x22 || P || message` until it has decrypted a reply.
    /// - Throws: as `init(initiatingWith:identity:localAddress:remoteAddress:kem:…)`;
    ///   `.kemUnavailable` when the bundle has a KEM prekey and `encapsulation` is `nil`,
    ///   `.invalidConfiguration` when an encapsulation is given for a bundle without one.
    @_spi(Testing) public init(
        initiatingWith bundle: PreKeyBundle, identity: IdentityKeyPair, localAddress: ProtocolAddress,
        remoteAddress: ProtocolAddress, ephemeralKey: X25519.PrivateKey, encapsulation: KEMEncapsulation?,
        registrationID: RegistrationID? = nil, configuration: SessionConfiguration = .default,
        random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) {
        let kemKey = try Self.checkInitiation(bundle, kemAvailable: encapsulation != nil, configuration: configuration)
        guard kemKey != nil || encapsulation == nil else {
            throw .invalidConfiguration("an encapsulation was given for a bundle without a KEM prekey")
        }
        var kemPart: PreKeyMessage.Prefix.KEMPart?
        if let kem = bundle.kemPreKey, let encapsulation {
            kemPart = try PreKeyMessage.Prefix.KEMPart(preKeyID: kem.id, ciphertext: encapsulation.ciphertext)
        }
        let prefix = PreKeyMessage.Prefix(
            identityKey: identity.publicKey, baseKey: ephemeralKey.publicKey, signedPreKeyID: bundle.signedPreKeyID,
            oneTimePreKeyID: bundle.oneTimePreKey?.id, kem: kemPart, registrationID: registrationID)
        let agreement = try X3DH.initiate(
            identity: identity, localAddress: localAddress, remoteAddress: remoteAddress, bundle: bundle,
            ephemeralKey: ephemeralKey, prefix: prefix, kemSharedSecret: encapsulation?.sharedSecret)
        let ratchet = try DoubleRatchet.initiator(
            sharedSecret: agreement.sharedSecret, remoteSignedPreKey: bundle.signedPreKey, random: random)
        self.init(
            role: .initiator, configuration: configuration, localIdentityKey: identity.publicKey,
            remoteIdentityKey: bundle.identityKey, localAddress: localAddress, remoteAddress: remoteAddress,
            baseKey: prefix.baseKey, preKeyPrefixDigest: prefix.digest, pendingPreKeyPrefix: prefix, ratchet: ratchet,
            isPostQuantum: kemPart != nil, remoteRegistrationID: bundle.registrationID)
    }

    /// The bundle's checks, then the post-quantum policy: returns the bundle's checked KEM key.
    private static func checkInitiation(
        _ bundle: PreKeyBundle, kemAvailable: Bool, configuration: SessionConfiguration
    ) throws(SessionError) -> KEMEncapsulationKey? {
        let kemKey = try X3DH.checkBundle(bundle)
        if kemKey == nil, configuration.requirePostQuantum { throw .postQuantumRequired }
        if kemKey != nil, !kemAvailable { throw .kemUnavailable }
        return kemKey
    }
}
