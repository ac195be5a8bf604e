/// Every protocol limit and constant of SPEC §2–§6 in one place.
public enum ProtocolLimits {
    /// Default largest number of message keys one message may skip in one chain (SPEC §4).
    public static let defaultMaxSkip = 256
    /// Default largest number of skipped message keys kept per session or chain (SPEC §4, §5).
    public static let defaultMaxStored = 2000
    /// Sender-key chains kept per sender; the oldest is dropped beyond this (issue #3).
    public static let maxSenderKeyChainsPerSender = 5
    /// Default number of one-time prekeys generated in a batch.
    public static let defaultOneTimePreKeyBatch = 50
    /// Replenish one-time prekeys when fewer than this many remain.
    public static let oneTimePreKeyLowWaterMark = 20
    /// Default signed-prekey rotation interval, in seconds (7 days).
    public static let signedPreKeyRotationInterval: Double = 7 * 24 * 3600
    /// Default time a replaced signed prekey is kept after its replacement, in seconds
    /// (30 days, as Signal's clients do), so that prekey messages built from a bundle fetched
    /// before the rotation still decrypt. Removed once the period has passed.
    public static let signedPreKeyGracePeriod: Double = 30 * 24 * 3600
    /// Default time, in seconds (7 days), for which a device that switched to signed prekeys
    /// signed with `kem` = 1 still accepts classic prekey messages to its older classic signed
    /// prekeys (messages in flight, built from a bundle fetched before the switch). Counted from
    /// the creation of the first `kem` = 1 signed prekey that replaced them; afterwards such a
    /// message is `SessionError.postQuantumRequired` (`PreKeyPolicy.classicPreKeyMessageWindow`).
    public static let classicPreKeyMessageWindow: Double = 7 * 24 * 3600
    /// Sessions kept per peer device besides the current one (`SessionRecord`), the oldest
    /// dropped first: 40, as libsignal (`ARCHIVED_STATES_MAX_LENGTH`).
    public static let maxPreviousSessions = 40
    /// Default number of EK_A replay records (SPEC §3) held under one signed prekey before it is
    /// rotated early (`PreKeyPolicy.maximumRecordedBaseKeys`).
    public static let maximumRecordedBaseKeys = 10_000
    /// The largest `maxStored` (and so `maxSkip`) a session accepts, in configurations and in
    /// persisted sessions: one forged message may make a receiver derive up to `maxSkip` keys
    /// before its tag is checked, so the bound must stay far below what memory allows.
    public static let maximumMaxStored = 100_000
}

/// The fixed HKDF info strings and signature labels of SPEC §3–§6 (ASCII, no terminator).
enum ProtocolInfo {
    /// X3DH shared-secret derivation without a KEM prekey (followed by SHA-256(P)).
    static let x3dh: [UInt8] = Array("SessionKit X3DH v2".utf8)
    /// X3DH shared-secret derivation with a KEM prekey (followed by SHA-256(P)).
    static let pqxdh: [UInt8] = Array("SessionKit PQXDH v2".utf8)
    /// Root-key ratchet step (KDF_RK).
    static let ratchet: [UInt8] = Array("SessionKit Ratchet v2".utf8)
    /// Message key expansion (MSGKEYS).
    static let messageKeys: [UInt8] = Array("SessionKit MessageKeys v2".utf8)
    /// Sender-key message key expansion (key, nonce and commitment).
    static let senderKey: [UInt8] = Array("SessionKit SenderKey v2".utf8)
    /// Self-encryption key derivation.
    static let selfEncryption: [UInt8] = Array("SessionKit Self v2".utf8)
    /// The label the identity key signs a signed prekey under: `label || Encode(SPK) || u8(kem)`.
    static let signedPreKeySignature: [UInt8] = Array("SessionKit SPK v2".utf8)
    /// The label the identity key signs a KEM prekey under: `label || EncodeKEM(ek)`.
    static let kemPreKeySignature: [UInt8] = Array("SessionKit KEM v2".utf8)
    /// The retry-notice MAC key derivation (SPEC §9).
    static let retryNotice: [UInt8] = Array("SessionKit Retry v2".utf8)
}

/// The type bytes of SPEC §3–§6 (version 2). Version 1's type bytes (0x01, 0x02, 0x10, 0x11,
/// 0x20) are `unsupportedVersion` like every other unknown byte.
enum WireType {
    /// A Double Ratchet message.
    static let ratchetMessage: UInt8 = 0x21
    /// A prekey message (X3DH prefix + ratchet message).
    static let preKeyMessage: UInt8 = 0x22
    /// A sender-key distribution message.
    static let senderKeyDistribution: UInt8 = 0x23
    /// A sender-key message.
    static let senderKeyMessage: UInt8 = 0x24
    /// A self-encrypted blob.
    static let selfEncrypted: UInt8 = 0x25
    /// A prekey bundle.
    static let preKeyBundle: UInt8 = 0x26
    /// A retry notice (SPEC §9).
    static let retryNotice: UInt8 = 0x27
}
