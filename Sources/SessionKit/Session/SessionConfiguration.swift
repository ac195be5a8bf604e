/// The limits of Double Ratchet sessions (SPEC §4) and the post-quantum policy for new ones
/// (SPEC §3 "Downgrades").
///
/// `maxSkip` and `maxStored` belong to each session: a session keeps the limits it was
/// created with (they are persisted with it). `requirePostQuantum`,
/// `allowsClassicSessionsDuringMigration` and `skippedKeyMaxAge` are the manager's policy,
/// applied on every call; they are not persisted with sessions (whether a session is post-quantum is:
/// `SessionState.isPostQuantum`).
public struct SessionConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// MAX_SKIP: the most message keys one received message may skip in one chain.
    public let maxSkip: Int
    /// MAX_STORED: the most skipped message keys kept per session (the oldest is evicted first).
    public let maxStored: Int
    /// When on, a bundle whose signed prekey is signed with `kem` = 0 (no KEM prekey) is
    /// refused as initiator, and any prekey message without a KEM part as responder, both with
    /// `SessionError.postQuantumRequired`; and classic sessions that exist already are not used:
    /// encrypting on a classic current session, and a message that a classic session (current
    /// or previous) decrypts, are refused with `postQuantumRequired` and change nothing (such a
    /// session never becomes current again).
    public let requirePostQuantum: Bool
    /// When on, a responder accepts a prekey message without a KEM part that names a signed
    /// prekey signed with `kem` = 1 (SPEC §3's stripped-KEM rule would make it
    /// `invalidMessage`): for the time peers without a KEM are still being upgraded. It also
    /// lifts `PreKeyPolicy.classicPreKeyMessageWindow` (classic prekey messages to old classic
    /// signed prekeys after the switch to KEM prekeys). Such a session has no post-quantum
    /// protection; `requirePostQuantum` overrides this.
    public let allowsClassicSessionsDuringMigration: Bool
    /// How long a skipped message key is kept, in seconds (30 days by default), besides the
    /// `maxStored` bound: when a message from the peer is decrypted, the keys of its sessions
    /// stored longer ago are deleted (a message that arrives later than this after a later one
    /// no longer decrypts). A key kept by a version without this limit counts its age from
    /// when its session was next loaded.
    public let skippedKeyMaxAge: Int64

    /// The default `skippedKeyMaxAge`: 30 days.
    public static let defaultSkippedKeyMaxAge: Int64 = 30 * 24 * 3600

    /// The defaults of SPEC §4: MAX_SKIP = 256, MAX_STORED = 2000; post-quantum sessions
    /// preferred (used whenever both sides have a KEM) but not required.
    public static let `default` = SessionConfiguration(
        validatedMaxSkip: ProtocolLimits.defaultMaxSkip, maxStored: ProtocolLimits.defaultMaxStored,
        requirePostQuantum: false, allowsClassicSessionsDuringMigration: false, skippedKeyMaxAge: defaultSkippedKeyMaxAge)

    /// Creates a configuration.
    /// - Throws: `SessionError.invalidConfiguration` unless 0 ≤ maxSkip ≤ maxStored ≤
    ///   `ProtocolLimits.maximumMaxStored` (100,000) and `skippedKeyMaxAge` > 0.
    public init(
        maxSkip: Int = ProtocolLimits.defaultMaxSkip, maxStored: Int = ProtocolLimits.defaultMaxStored,
        requirePostQuantum: Bool = false, allowsClassicSessionsDuringMigration: Bool = false,
        skippedKeyMaxAge: Int64 = SessionConfiguration.defaultSkippedKeyMaxAge
    ) throws(SessionError) {
        guard skippedKeyMaxAge > 0 else { throw .invalidConfiguration("skippedKeyMaxAge must be positive") }
        guard maxSkip >= 0 else { throw .invalidConfiguration("maxSkip must not be negative") }
        guard maxSkip <= maxStored else { throw .invalidConfiguration("maxSkip must not exceed maxStored") }
        guard maxStored <= ProtocolLimits.maximumMaxStored else {
            throw .invalidConfiguration("maxStored must not exceed \(ProtocolLimits.maximumMaxStored)")
        }
        self.init(
            validatedMaxSkip: maxSkip, maxStored: maxStored, requirePostQuantum: requirePostQuantum,
            allowsClassicSessionsDuringMigration: allowsClassicSessionsDuringMigration, skippedKeyMaxAge: skippedKeyMaxAge)
    }

    private init(
        validatedMaxSkip maxSkip: Int, maxStored: Int, requirePostQuantum: Bool, allowsClassicSessionsDuringMigration: Bool,
        skippedKeyMaxAge: Int64
    ) {
        self.maxSkip = maxSkip
        self.maxStored = maxStored
        self.requirePostQuantum = requirePostQuantum
        self.allowsClassicSessionsDuringMigration = allowsClassicSessionsDuringMigration
        self.skippedKeyMaxAge = skippedKeyMaxAge
    }

    /// The limits only, with the default policy (what a persisted session keeps).
    var limits: SessionConfiguration {
        SessionConfiguration(
            validatedMaxSkip: maxSkip, maxStored: maxStored, requirePostQuantum: false,
            allowsClassicSessionsDuringMigration: false, skippedKeyMaxAge: Self.defaultSkippedKeyMaxAge)
    }

    /// Whether a prekey message without a KEM part may create a session with a signed prekey
    /// signed with `kem` = 1.
    var acceptsClassicPreKeyMessagesToKEMSignedPreKeys: Bool {
        allowsClassicSessionsDuringMigration && !requirePostQuantum
    }

    /// The values.
    public var description: String {
        "SessionConfiguration(maxSkip: \(maxSkip), maxStored: \(maxStored), requirePostQuantum: \(requirePostQuantum), "
            + "classicDuringMigration: \(allowsClassicSessionsDuringMigration), skippedKeyMaxAge: \(skippedKeyMaxAge))"
    }
}
