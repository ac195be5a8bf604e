import SignalPrimitives

extension SessionState {
    /// A session created by a prekey message, with what its first message produced.
    public struct Establishment: Sendable, CustomStringConvertible {
        /// The new session (not stored anywhere yet).
        public let session: SessionState
        /// The first message's plaintext.
        public let plaintext: [UInt8]
        /// The one-time prekey X3DH used, which the caller must now delete together with
        /// storing `session` (SPEC §3: a one-time prekey is used once).
        public let consumedOneTimePreKeyID: UInt32?

        /// A short description without the plaintext or secrets.
        public var description: String {
            "Establishment(\(session), plaintext: \(plaintext.count) bytes, consumedOneTimePreKeyID: \(consumedOneTimePreKeyID.map(String.init) ?? "none"))"
        }
    }

    /// Creates a session as the responder (Bob) from a prekey message and decrypts it
    /// (SPEC §3–§4). Nothing is created, consumed or drawn unless the whole message decrypts.
    ///
    /// Order: the signed prekey, then the one-time prekey are looked up (`unknownPreKey`);
    /// X3DH runs (IK_A must be a valid Ed25519 point; a small-order EK_A is rejected); the
    /// ratchet starts with DHs = SPK_B, RK = SK, and decrypts the message, which performs
    /// the first DH ratchet step.
    /// - Throws: `SessionError.unknownPreKey` for a prekey id not held, `.invalidKey`,
    ///   `.tooManySkippedMessages`, `.invalidMessage`, `.invalidPadding` or `.primitive`.
    public static func accept(
        _ message: PreKeyMessage, identity: IdentityKeyPair, preKeys: some PreKeyLookup,
        configuration: SessionConfiguration = .default, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> Establishment {
        let prefix = message.prefix
        guard let signedPreKey = preKeys.signedPreKey(id: prefix.signedPreKeyID) else { throw .unknownPreKey }
        var oneTimePreKey: OneTimePreKey?
        if let id = prefix.oneTimePreKeyID {
            guard let key = preKeys.oneTimePreKey(id: id) else { throw .unknownPreKey }
            oneTimePreKey = key
        }
        let agreement = try X3DH.respond(
            identity: identity, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey,
            initiatorIdentityKey: prefix.identityKey, initiatorEphemeralKey: prefix.baseKey)
        var session = SessionState(
            role: .responder, configuration: configuration, localIdentityKey: identity.publicKey,
            remoteIdentityKey: prefix.identityKey, preKeyPrefix: prefix, sendsPreKeyMessages: false,
            ratchet: DoubleRatchet.responder(sharedSecret: agreement.sharedSecret, signedPreKey: signedPreKey.privateKey))
        let plaintext = try session.ratchet.decrypt(
            message.message, associatedData: session.associatedData, configuration: configuration, random: random)
        return Establishment(session: session, plaintext: plaintext, consumedOneTimePreKeyID: prefix.oneTimePreKeyID)
    }
}
