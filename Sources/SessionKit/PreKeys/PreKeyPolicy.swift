/// When a device generates, replenishes, rotates and expires its prekeys (`LocalPreKeys`).
///
/// Intervals are whole seconds. The defaults are those of `ProtocolLimits`: batches of 50
/// one-time prekeys (and, with a KEM, 50 one-time KEM prekeys), replenished when fewer than 20
/// remain; a new signed prekey (with its last-resort KEM prekey) every 7 days, or earlier once
/// 10,000 EK_A replay records are held under it, the replaced one kept for 30 days; classic
/// prekey messages to classic signed prekeys accepted for 7 days after the device switched to
/// signed prekeys with a KEM prekey.
public struct PreKeyPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The most one-time prekeys one batch may hold.
    public static let maximumBatchSize = 10_000

    /// How many one-time prekeys (and one-time KEM prekeys) a full batch holds; replenishing
    /// tops the held count back up to this number.
    public let oneTimePreKeyBatchSize: Int
    /// Replenish when fewer than this many one-time prekeys (or one-time KEM prekeys) are held.
    public let oneTimePreKeyLowWaterMark: Int
    /// The age, in seconds, at which the current signed prekey is replaced.
    public let signedPreKeyRotationInterval: Int64
    /// How long, in seconds, a replaced signed prekey is kept after its replacement so that
    /// prekey messages already in flight still decrypt. It is removed once this has passed.
    public let signedPreKeyGracePeriod: Int64
    /// The signed prekey is replaced early once this many EK_A replay records (SPEC §3) are held
    /// under it, which bounds the record (each X3DH it completes adds 32 bytes).
    public let maximumRecordedBaseKeys: Int
    /// How long, in seconds, a device that switched to signed prekeys signed with `kem` = 1
    /// (it was given a KEM) keeps accepting classic prekey messages (without a KEM part) to
    /// its older classic signed prekeys: the in-flight window, counted from the creation of the
    /// first `kem` = 1 signed prekey newer than the one the message names. Afterwards such a
    /// message is refused with `SessionError.postQuantumRequired`, even while the classic
    /// signed prekey is still held for its grace period (so a server replaying the device's
    /// old classic bundle to a new contact cannot have a classic session accepted for the whole
    /// grace period). Does not apply when `SessionConfiguration.allowsClassicSessionsDuringMigration`
    /// is on. Default 7 days.
    public let classicPreKeyMessageWindow: Int64

    /// The defaults: batch 50, low-water mark 20, rotation every 7 days or at 10,000 replay
    /// records, grace period 30 days, classic prekey messages to classic signed prekeys for 7
    /// days after the switch to `kem` = 1 signed prekeys.
    public static let `default` = PreKeyPolicy(
        validatedBatchSize: ProtocolLimits.defaultOneTimePreKeyBatch,
        lowWaterMark: ProtocolLimits.oneTimePreKeyLowWaterMark,
        rotationInterval: Int64(ProtocolLimits.signedPreKeyRotationInterval),
        gracePeriod: Int64(ProtocolLimits.signedPreKeyGracePeriod),
        maximumRecordedBaseKeys: ProtocolLimits.maximumRecordedBaseKeys,
        classicPreKeyMessageWindow: Int64(ProtocolLimits.classicPreKeyMessageWindow))

    /// Creates a policy.
    /// - Throws: `SessionError.invalidConfiguration` unless 1 ≤ batch size ≤ `maximumBatchSize`,
    ///   0 ≤ low-water mark ≤ batch size, the rotation interval is positive, the grace period and
    ///   the classic prekey message window are not negative and the replay-record bound is at
    ///   least 1.
    public init(
        oneTimePreKeyBatchSize: Int = ProtocolLimits.defaultOneTimePreKeyBatch,
        oneTimePreKeyLowWaterMark: Int = ProtocolLimits.oneTimePreKeyLowWaterMark,
        signedPreKeyRotationInterval: Int64 = Int64(ProtocolLimits.signedPreKeyRotationInterval),
        signedPreKeyGracePeriod: Int64 = Int64(ProtocolLimits.signedPreKeyGracePeriod),
        maximumRecordedBaseKeys: Int = ProtocolLimits.maximumRecordedBaseKeys,
        classicPreKeyMessageWindow: Int64 = Int64(ProtocolLimits.classicPreKeyMessageWindow)
    ) throws(SessionError) {
        guard (1 ... Self.maximumBatchSize).contains(oneTimePreKeyBatchSize) else {
            throw .invalidConfiguration("oneTimePreKeyBatchSize must be in 1...\(Self.maximumBatchSize)")
        }
        guard (0 ... oneTimePreKeyBatchSize).contains(oneTimePreKeyLowWaterMark) else {
            throw .invalidConfiguration("oneTimePreKeyLowWaterMark must be in 0...oneTimePreKeyBatchSize")
        }
        guard signedPreKeyRotationInterval > 0 else { throw .invalidConfiguration("signedPreKeyRotationInterval must be positive") }
        guard signedPreKeyGracePeriod >= 0 else { throw .invalidConfiguration("signedPreKeyGracePeriod must not be negative") }
        guard maximumRecordedBaseKeys >= 1 else { throw .invalidConfiguration("maximumRecordedBaseKeys must be at least 1") }
        guard classicPreKeyMessageWindow >= 0 else { throw .invalidConfiguration("classicPreKeyMessageWindow must not be negative") }
        self.init(
            validatedBatchSize: oneTimePreKeyBatchSize, lowWaterMark: oneTimePreKeyLowWaterMark,
            rotationInterval: signedPreKeyRotationInterval, gracePeriod: signedPreKeyGracePeriod,
            maximumRecordedBaseKeys: maximumRecordedBaseKeys, classicPreKeyMessageWindow: classicPreKeyMessageWindow)
    }

    private init(
        validatedBatchSize: Int, lowWaterMark: Int, rotationInterval: Int64, gracePeriod: Int64, maximumRecordedBaseKeys: Int,
        classicPreKeyMessageWindow: Int64
    ) {
        oneTimePreKeyBatchSize = validatedBatchSize
        oneTimePreKeyLowWaterMark = lowWaterMark
        signedPreKeyRotationInterval = rotationInterval
        signedPreKeyGracePeriod = gracePeriod
        self.maximumRecordedBaseKeys = maximumRecordedBaseKeys
        self.classicPreKeyMessageWindow = classicPreKeyMessageWindow
    }

    /// The values.
    public var description: String {
        "PreKeyPolicy(batch: \(oneTimePreKeyBatchSize), lowWaterMark: \(oneTimePreKeyLowWaterMark), "
            + "rotation: \(signedPreKeyRotationInterval)s, grace: \(signedPreKeyGracePeriod)s, "
            + "replay records: \(maximumRecordedBaseKeys), classic window: \(classicPreKeyMessageWindow)s)"
    }
}
