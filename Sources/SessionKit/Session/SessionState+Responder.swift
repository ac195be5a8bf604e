import SignalPrimitives

extension SessionState {
    /// A session created by a prekey message, with what its first message produced.
    @_spi(Testing) public struct Establishment: Sendable, CustomStringConvertible {
        /// The new session (not stored anywhere yet).
        public let session: SessionState
        /// The first message's plaintext.
        public let plaintext: [UInt8]
        /// What X3DH used up and recorded: apply it in the same store write that stores
        /// `session` (SPEC §3).
        public let consumption: PreKeyConsumption

        /// A short description without the plaintext or secrets.
        public var description: String {
            "Establishment(\(session), plaintext: \(plaintext.count) bytes, \(consumption))"
        }
    }

    /// Creates a session as the responder (Bob at `localAddress`) from a prekey message that
    /// came from `remoteAddress`, and decrypts it (SPEC §3–§4). Nothing is created, consumed,
    /// recorded or drawn unless the whole message decrypts.
    ///
    /// Order (after the caller's match against sessions it holds): the signed prekey
    /// (`unknownPreKey`); the EK_A replay record under it (`duplicateMessage`, before any DH);
    /// the one-time prekey and the KEM prekey (`unknownPreKey`); the stripped-KEM rule (a
    /// message without a KEM part to a signed prekey signed with `kem` = 1 is
    /// `invalidMessage`, unless `configuration` allows classic sessions during a migration),
    /// `requirePostQuantum` (`postQuantumRequired`), and a classic signed prekey past its
    /// in-flight window after the switch to KEM prekeys (`preKeys` refuses classic messages
    /// to it: `postQuantumRequired`, unless classic sessions are allowed during a migration);
    /// then X3DH (IK_A must be a valid
    /// Ed25519 point; a small-order EK_A is rejected), the decapsulation of CT, and the ratchet,
    /// which starts with DHs = SPK_B, RK = SK and decrypts the message (its first DH step),
    /// whose padded plaintext must have `contentType` as its first byte (SPEC §2).
    /// - Throws: `SessionError.unknownPreKey`, `.duplicateMessage`, `.invalidMessage`,
    ///   `.postQuantumRequired`, `.kemUnavailable` (a KEM part and no `kem`), `.invalidKey`,
    ///   `.tooManySkippedMessages`, `.invalidPadding` or `.primitive`.
    @_spi(Testing) public static func accept(
        _ message: PreKeyMessage, identity: IdentityKeyPair, localAddress: ProtocolAddress, remoteAddress: ProtocolAddress,
        preKeys: some PreKeyLookup, kem: (any KeyEncapsulationMechanism)?,
        configuration: SessionConfiguration = .default, random: any RandomSource = SystemRandomSource(),
        contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> Establishment {
        let prefix = message.prefix
        guard let signedPreKey = preKeys.signedPreKey(id: prefix.signedPreKeyID) else { throw .unknownPreKey }
        guard !preKeys.hasRecordedBaseKey(prefix.baseKey, signedPreKeyID: prefix.signedPreKeyID) else {
            throw .duplicateMessage
        }
        var oneTimePreKey: OneTimePreKey?
        if let id = prefix.oneTimePreKeyID {
            guard let key = preKeys.oneTimePreKey(id: id) else { throw .unknownPreKey }
            oneTimePreKey = key
        }
        var kemPreKey: KEMPreKey?
        if let part = prefix.kem {
            guard let key = preKeys.kemPreKey(id: part.preKeyID) else { throw .unknownPreKey }
            kemPreKey = key
        }
        if prefix.kem == nil {
            if signedPreKey.signsKEMPreKeys, !configuration.acceptsClassicPreKeyMessagesToKEMSignedPreKeys {
                throw configuration.requirePostQuantum ? .postQuantumRequired : .invalidMessage
            }
            if configuration.requirePostQuantum { throw .postQuantumRequired }
            // A classic signed prekey past the in-flight window after the switch to KEM prekeys.
            if !configuration.allowsClassicSessionsDuringMigration,
               !preKeys.acceptsClassicPreKeyMessages(signedPreKeyID: prefix.signedPreKeyID) {
                throw .postQuantumRequired
            }
        }
        var kemSharedSecret: SecureBytes?
        if let part = prefix.kem, let kemPreKey {
            guard let kem else { throw .kemUnavailable }
            kemSharedSecret = try kem.decapsulate(part.ciphertext, seed: kemPreKey.seed)
        }
        let agreement = try X3DH.respond(
            identity: identity, localAddress: localAddress, remoteAddress: remoteAddress, prefix: prefix,
            signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey, kemSharedSecret: kemSharedSecret)
        var session = SessionState(
            role: .responder, configuration: configuration, localIdentityKey: identity.publicKey,
            remoteIdentityKey: prefix.identityKey, localAddress: localAddress, remoteAddress: remoteAddress,
            baseKey: prefix.baseKey, preKeyPrefixDigest: prefix.digest, pendingPreKeyPrefix: nil,
            ratchet: DoubleRatchet.responder(sharedSecret: agreement.sharedSecret, signedPreKey: signedPreKey.privateKey),
            isPostQuantum: prefix.kem != nil, remoteRegistrationID: prefix.registrationID)
        let plaintext = try session.ratchet.decrypt(
            message.message, associatedData: session.associatedData, configuration: session.configuration, random: random,
            contentType: contentType)
        let consumption = PreKeyConsumption(
            signedPreKeyID: prefix.signedPreKeyID, baseKey: prefix.baseKey, oneTimePreKeyID: prefix.oneTimePreKeyID,
            oneTimeKEMPreKeyID: kemPreKey?.kind == .oneTime ? kemPreKey?.id : nil)
        return Establishment(session: session, plaintext: plaintext, consumption: consumption)
    }
}
