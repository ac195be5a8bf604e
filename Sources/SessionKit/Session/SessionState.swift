import SignalPrimitives

/// A Double Ratchet session with one peer device (SPEC §3–§4): the ratchet, the session's
/// associated data (both identity keys and both addresses), and what identifies the X3DH run
/// that created it.
///
/// A value type. `encrypt` and `decrypt` are transactional: when they throw, the session is
/// exactly what it was before the call (decryption works on candidate values and assigns
/// them only after the message authenticated and unpadded), and a failed decryption draws
/// nothing from the random source. Persist the state with `serialized()` after each success.
///
/// Create one as the initiator from a bundle (`init(initiatingWith:…)`), or as the responder
/// from a first prekey message (`SessionState.accept(_:…)`); `SessionRecord.decrypt` routes any
/// received message to the right session.
@_spi(Storage) @_spi(Testing) public struct SessionState: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Which side of X3DH this party was.
    public enum Role: UInt8, Sendable, Hashable {
        /// Alice: started the session from the peer's bundle.
        case initiator = 1
        /// Bob: the session was created by the peer's prekey message.
        case responder = 2
    }

    /// This party's side of X3DH.
    public var role: Role { constants.role }
    /// The limits this session applies (`maxSkip`, `maxStored`).
    public var configuration: SessionConfiguration { constants.configuration }
    /// Our Ed25519 identity key.
    public var localIdentityKey: Ed25519.PublicKey { constants.localIdentityKey }
    /// The peer's Ed25519 identity key.
    public var remoteIdentityKey: Ed25519.PublicKey { constants.remoteIdentityKey }
    /// Our address, bound into AD.
    public var localAddress: ProtocolAddress { constants.localAddress }
    /// The peer's address, bound into AD.
    public var remoteAddress: ProtocolAddress { constants.remoteAddress }
    /// EK_A, the initiator's ephemeral X3DH key: with the role, it identifies the session.
    public var baseKey: X25519.PublicKey { constants.baseKey }
    /// SHA-256(P) of the prekey prefix that created the session (SPEC §3): a prekey message
    /// with the same EK_A must carry exactly this prefix.
    public var preKeyPrefixDigest: [UInt8] { constants.preKeyPrefixDigest }
    /// Whether the session was created by a hybrid X3DH with a KEM part (SPEC §3: a KEM prekey
    /// in the bundle, a KEM ciphertext in the prefix), so that its first key stays secret as
    /// long as either the Diffie–Hellman results or the KEM's shared secret do. Persisted with
    /// the session (a session stored before this was recorded loads as classic, unless it is an
    /// initiator still sending a prefix with a KEM part).
    public var isPostQuantum: Bool { constants.isPostQuantum }
    /// The peer's registration id (SPEC §9): from the bundle for an initiator, from the prefix
    /// for a responder; `nil` when the peer sent none (flags bit 2 clear). Persisted with the
    /// session (a session stored before this was recorded loads without one).
    public var remoteRegistrationID: RegistrationID? { constants.remoteRegistrationID }
    /// Whether a retry notice archived this session (SPEC §9): it still decrypts late messages
    /// from the peer but never becomes current again. Persisted with the session.
    public internal(set) var isArchived: Bool
    /// The prefix an initiator puts on its messages until it has decrypted a reply; `nil`
    /// afterwards and always for a responder.
    public private(set) var pendingPreKeyPrefix: PreKeyMessage.Prefix?
    /// AD = IK_A || IK_B || Encode(A) || Encode(B).
    var associatedData: [UInt8] { constants.associatedData }
    /// What never changes in the session, in one immutable object: a copy of the session (a
    /// record loaded, stored or advanced) retains this once instead of each key and address,
    /// some of which every session of this device shares (our identity key and address), so
    /// that sessions advanced on several cores at once do not contend for their counts.
    private let constants: Constants
    /// The ratchet.
    var ratchet: DoubleRatchet
    /// How many times this session has encrypted or decrypted a message (it only grows, and is
    /// persisted): of two copies of one session, the one with the lower generation is older.
    /// `SessionRecord.promote` refuses to replace a held session with an older copy. Every
    /// change of the session advances it: a store that writes only what changed
    /// (`SessionKitSQLite`) takes a session at the generation it wrote as unchanged.
    public internal(set) var generation: UInt64

    /// The parts of a session fixed when it is created (see `constants`).
    private final class Constants: Sendable {
        let role: Role
        let configuration: SessionConfiguration
        let localIdentityKey: Ed25519.PublicKey
        let remoteIdentityKey: Ed25519.PublicKey
        let localAddress: ProtocolAddress
        let remoteAddress: ProtocolAddress
        let baseKey: X25519.PublicKey
        let preKeyPrefixDigest: [UInt8]
        let isPostQuantum: Bool
        let remoteRegistrationID: RegistrationID?
        let associatedData: [UInt8]

        init(
            role: Role, configuration: SessionConfiguration, localIdentityKey: Ed25519.PublicKey, remoteIdentityKey: Ed25519.PublicKey,
            localAddress: ProtocolAddress, remoteAddress: ProtocolAddress, baseKey: X25519.PublicKey, preKeyPrefixDigest: [UInt8],
            isPostQuantum: Bool, remoteRegistrationID: RegistrationID?
        ) {
            self.role = role
            self.configuration = configuration
            self.localIdentityKey = localIdentityKey
            self.remoteIdentityKey = remoteIdentityKey
            self.localAddress = localAddress
            self.remoteAddress = remoteAddress
            self.baseKey = baseKey
            self.preKeyPrefixDigest = preKeyPrefixDigest
            self.isPostQuantum = isPostQuantum
            self.remoteRegistrationID = remoteRegistrationID
            associatedData = role == .initiator
                ? X3DH.associatedData(initiatorIdentity: localIdentityKey, responderIdentity: remoteIdentityKey,
                                      initiator: localAddress, responder: remoteAddress)
                : X3DH.associatedData(initiatorIdentity: remoteIdentityKey, responderIdentity: localIdentityKey,
                                      initiator: remoteAddress, responder: localAddress)
        }
    }

    /// Archives this session for a store that found its file restored from an older copy
    /// (`SessionKitSQLite`'s restore detection): as `isArchived` from a retry notice, it still
    /// decrypts late messages but is never used to send again, because its sending chain may be
    /// behind the one the lost copy used. Advances `generation` (the session changed).
    @_spi(Storage) public mutating func archiveForRestoredStore() {
        isArchived = true
        generation &+= 1
    }

    /// Assembles a session from its parts (construction and persistence).
    init(
        role: Role, configuration: SessionConfiguration, localIdentityKey: Ed25519.PublicKey,
        remoteIdentityKey: Ed25519.PublicKey, localAddress: ProtocolAddress, remoteAddress: ProtocolAddress,
        baseKey: X25519.PublicKey, preKeyPrefixDigest: [UInt8], pendingPreKeyPrefix: PreKeyMessage.Prefix?,
        ratchet: DoubleRatchet, generation: UInt64 = 0, isPostQuantum: Bool = false,
        remoteRegistrationID: RegistrationID? = nil, isArchived: Bool = false
    ) {
        self.generation = generation
        self.isArchived = isArchived
        self.pendingPreKeyPrefix = pendingPreKeyPrefix
        self.ratchet = ratchet
        constants = Constants(
            role: role, configuration: configuration.limits, localIdentityKey: localIdentityKey, remoteIdentityKey: remoteIdentityKey,
            localAddress: localAddress, remoteAddress: remoteAddress, baseKey: baseKey, preKeyPrefixDigest: preKeyPrefixDigest,
            isPostQuantum: isPostQuantum, remoteRegistrationID: remoteRegistrationID)
    }

    /// AD = IK_A || IK_B || Encode(A) || Encode(B), the associated data every message of the
    /// session authenticates.
    public var associatedDataBytes: [UInt8] { associatedData }

    /// Whether `encrypt` produces prekey messages: true for an initiator until it has
    /// decrypted a message from the responder, always false for a responder.
    public var sendsPreKeyMessages: Bool { pendingPreKeyPrefix != nil }

    /// The number of skipped message keys held.
    public var skippedMessageKeyCount: Int { ratchet.skippedKeys.count }

    // MARK: Encrypt

    /// Encrypts `plaintext` (SPEC §4), padded as SPEC §2 says with `contentType` as the first
    /// byte (`.senderKeyDistribution` for a distribution, SPEC §5). While `sendsPreKeyMessages`
    /// holds, the result is a prekey message (`0x22 || P || message`).
    /// - Throws: `SessionError.chainExhausted` when the sending counter or the previous
    ///   chain's length no longer fits in 32 bits, `SessionError.invalidMessage` for a
    ///   plaintext too long to pad, `SessionError.primitive` when AES-GCM is unavailable,
    ///   `SessionError.noSession` when the session has no sending chain yet (a responder
    ///   state that has not decrypted its first message, which only a persisted blob can hold).
    ///   The session is unchanged when it throws.
    @_spi(Testing) public mutating func encrypt(
        _ plaintext: [UInt8], contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> [UInt8] {
        let prefix = pendingPreKeyPrefix.map { [WireType.preKeyMessage] + $0.bytes } ?? []
        let message = try ratchet.encrypt(plaintext, associatedData: associatedData, prefix: prefix, contentType: contentType)
        advanceGeneration()
        return message
    }

    /// Counts one more change of the session (saturating: 2^64 changes cannot happen).
    private mutating func advanceGeneration() {
        if generation < UInt64.max { generation += 1 }
    }

    // MARK: Decrypt

    /// Whether `other` is a copy of this session (the same role and base key), possibly at
    /// another generation.
    func isSameSession(as other: SessionState) -> Bool { role == other.role && baseKey == other.baseKey }

    /// Whether a prekey message with this prefix belongs to this session: this party is the
    /// responder and the session was created from the same EK_A. (Its other fields must then
    /// equal the creating ones, which `decrypt` checks.)
    @_spi(Testing) public func isCreated(byPreKeyMessageWith prefix: PreKeyMessage.Prefix) -> Bool {
        role == .responder && prefix.baseKey == baseKey
    }

    /// Decodes and decrypts a message for this session; see `decrypt(_: IncomingMessage, …)`.
    /// - Throws: the errors of `IncomingMessage(serialized:)` and of `decrypt(_:random:contentType:)`.
    @_spi(Testing) public mutating func decrypt(
        _ bytes: [UInt8], random: any RandomSource = SystemRandomSource(), contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> [UInt8] {
        try decrypt(IncomingMessage(serialized: bytes), random: random, contentType: contentType)
    }

    /// Decrypts a message for this session (SPEC §4), transactionally.
    ///
    /// A prekey message is accepted only by the responder session created from the same
    /// EK_A, and only when its whole prefix P equals the creating one (IK_A, spk_id, the
    /// one-time prekey part and the KEM part). After the first successful decryption an
    /// initiator stops sending prekey messages. The padded plaintext must have `contentType` as
    /// its first byte (SPEC §2): a message of another content type is `invalidPadding`.
    /// - Throws: `SessionError.invalidMessage` (bad tag, a prekey message that does not
    ///   match, header.dh = DHr without a receiving chain), `.duplicateMessage`,
    ///   `.tooManySkippedMessages`, `.invalidKey` (a small-order ratchet key),
    ///   `.invalidPadding`, or `.primitive`. The session is unchanged when it throws, and no
    ///   key is drawn from `random`.
    @_spi(Testing) public mutating func decrypt(
        _ message: IncomingMessage, random: any RandomSource = SystemRandomSource(),
        contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> [UInt8] {
        switch message {
        case let .ratchet(ratchetMessage):
            let plaintext = try ratchet.decrypt(
                ratchetMessage, associatedData: associatedData, configuration: configuration, random: random,
                contentType: contentType)
            pendingPreKeyPrefix = nil
            advanceGeneration()
            return plaintext
        case let .preKey(preKeyMessage):
            guard isCreated(byPreKeyMessageWith: preKeyMessage.prefix),
                  ConstantTime.equals(preKeyMessage.prefix.digest, preKeyPrefixDigest) else {
                throw .invalidMessage
            }
            let plaintext = try ratchet.decrypt(
                preKeyMessage.message, associatedData: associatedData, configuration: configuration, random: random,
                contentType: contentType)
            advanceGeneration()
            return plaintext
        }
    }

    /// A redacted description: role, addresses, identities and ratchet counters only.
    public var description: String {
        "SessionState(\(role), \(localAddress) ↔ \(remoteAddress), local: \(localIdentityKey.hexString), "
            + "remote: \(remoteIdentityKey.hexString), postQuantum: \(isPostQuantum), prekeyMessages: \(sendsPreKeyMessages), "
            + "registrationID: \(remoteRegistrationID.map(\.description) ?? "none")\(isArchived ? ", archived" : ""), \(ratchet))"
    }
    /// A redacted description.
    public var debugDescription: String { description }
}
