import SignalPrimitives

/// What `SessionCipher.decrypt` produced.
public struct SessionDecryption: Sendable, CustomStringConvertible {
    /// The plaintext.
    public let plaintext: [UInt8]
    /// The one-time prekey consumed by X3DH: delete it in the same transaction that stores
    /// the session.
    public let consumedOneTimePreKeyID: UInt32?
    /// Whether X3DH ran and the session slot now holds a new session (replacing any other).
    public let establishedSession: Bool

    /// A short description without the plaintext.
    public var description: String {
        "SessionDecryption(\(plaintext.count) bytes, consumedOneTimePreKeyID: \(consumedOneTimePreKeyID.map(String.init) ?? "none"), new session: \(establishedSession))"
    }
}

/// Decryption for one peer device with one session slot, in the order of checks of SPEC §4.
public enum SessionCipher {
    /// Decrypts `bytes` from one peer device whose session (if any) is `session`.
    ///
    /// Order: the type byte, lengths and prekey flag, key canonicity (`IncomingMessage`);
    /// then the lookup — a 0x01 message needs a session (`noSession`); a prekey message goes
    /// to the session created from the same EK_A (whose IK_A, spk_id and one-time-prekey
    /// part must match, else `invalidMessage`), otherwise to X3DH with `preKeys`
    /// (`unknownPreKey`), whose new session replaces `session` on success; then the ratchet.
    ///
    /// An existing session keeps the limits it was created with; `configuration` applies to
    /// a session created here by X3DH.
    ///
    /// Transactional: when this throws, `session` is unchanged, no prekey is reported
    /// consumed and nothing was drawn from `random`.
    /// - Throws: `SessionError` with the SPEC §8 names: `unsupportedVersion`, `invalidMessage`,
    ///   `invalidKey`, `noSession`, `unknownPreKey`, `duplicateMessage`,
    ///   `tooManySkippedMessages`, `invalidPadding`; or `primitive`.
    public static func decrypt(
        _ bytes: [UInt8], session: inout SessionState?, identity: IdentityKeyPair, preKeys: some PreKeyLookup,
        configuration: SessionConfiguration = .default, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> SessionDecryption {
        let message = try IncomingMessage(serialized: bytes)
        switch message {
        case .ratchet:
            guard let plaintext = try session?.decrypt(message, random: random) else { throw .noSession }
            return SessionDecryption(plaintext: plaintext, consumedOneTimePreKeyID: nil, establishedSession: false)
        case let .preKey(preKeyMessage):
            if session?.isCreated(byPreKeyMessageWith: preKeyMessage.prefix) == true,
               let plaintext = try session?.decrypt(message, random: random) {
                return SessionDecryption(plaintext: plaintext, consumedOneTimePreKeyID: nil, establishedSession: false)
            }
            let established = try SessionState.accept(
                preKeyMessage, identity: identity, preKeys: preKeys, configuration: configuration, random: random)
            session = established.session
            return SessionDecryption(
                plaintext: established.plaintext, consumedOneTimePreKeyID: established.consumedOneTimePreKeyID,
                establishedSession: true)
        }
    }
}
