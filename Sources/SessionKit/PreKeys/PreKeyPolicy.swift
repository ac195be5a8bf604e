/// When a device generates, replenishes, rotates and expires its prekeys (`LocalPreKeys`).
///
/// Intervals are whole seconds. The defaults are those of `ProtocolLimits`: batches of 50
/// one-time prekeys, replenished when fewer than 20 remain; a new signed prekey every 7 days,
/// the replaced one kept for 30 days.
public struct PreKeyPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The most one-time prekeys one batch may hold.
    public static let maximumBatchSize = 10_000

    /// How many one-time prekeys a full batch holds; replenishing tops the held count back up
    /// to this number.
    public let oneTimePreKeyBatchSize: Int
    /// Replenish when fewer than this many one-time prekeys are held.
    public let oneTimePreKeyLowWaterMark: Int
    /// The age, in seconds, at which the current signed prekey is replaced.
    public let signedPreKeyRotationInterval: Int64
    /// How long, in seconds, a replaced signed prekey is kept after its replacement so that
    /// prekey messages already in flight still decrypt. It is removed once this has passed.
    public let signedPreKeyGracePeriod: Int64

    /// The defaults: batch 50, low-water mark 20, rotation every 7 days, grace period 30 days.
    public static let `default` = PreKeyPolicy(
        validatedBatchSize: ProtocolLimits.defaultOneTimePreKeyBatch,
        lowWaterMark: ProtocolLimits.oneTimePreKeyLowWaterMark,
        rotationInterval: Int64(ProtocolLimits.signedPreKeyRotationInterval),
        gracePeriod: Int64(ProtocolLimits.signedPreKeyGracePeriod))

    /// Creates a policy.
    /// - Throws: `SessionError.invalidConfiguration` unless 1 ≤ batch size ≤ `maximumBatchSize`,
    ///   0 ≤ low-water mark ≤ batch size, the rotation interval is positive and the grace
    ///   period is not negative.
    public init(
        oneTimePreKeyBatchSize: Int = ProtocolLimits.defaultOneTimePreKeyBatch,
        oneTimePreKeyLowWaterMark: Int = ProtocolLimits.oneTimePreKeyLowWaterMark,
        signedPreKeyRotationInterval: Int64 = Int64(ProtocolLimits.signedPreKeyRotationInterval),
        signedPreKeyGracePeriod: Int64 = Int64(ProtocolLimits.signedPreKeyGracePeriod)
    ) throws(SessionError) {
        guard (1 ... Self.maximumBatchSize).contains(oneTimePreKeyBatchSize) else {
            throw .invalidConfiguration("oneTimePreKeyBatchSize must be in 1...\(Self.maximumBatchSize)")
        }
        guard (0 ... oneTimePreKeyBatchSize).contains(oneTimePreKeyLowWaterMark) else {
            throw .invalidConfiguration("oneTimePreKeyLowWaterMark must be in 0...oneTimePreKeyBatchSize")
        }
        guard signedPreKeyRotationInterval > 0 else { throw .invalidConfiguration("signedPreKeyRotationInterval must be positive") }
        guard signedPreKeyGracePeriod >= 0 else { throw .invalidConfiguration("signedPreKeyGracePeriod must not be negative") }
        self.init(
            validatedBatchSize: oneTimePreKeyBatchSize, lowWaterMark: oneTimePreKeyLowWaterMark,
            rotationInterval: signedPreKeyRotationInterval, gracePeriod: signedPreKeyGracePeriod)
    }

    private init(validatedBatchSize: Int, lowWaterMark: Int, rotationInterval: Int64, gracePeriod: Int64) {
        oneTimePreKeyBatchSize = validatedBatchSize
        oneTimePreKeyLowWaterMark = lowWaterMark
        signedPreKeyRotationInterval = rotationInterval
        signedPreKeyGracePeriod = gracePeriod
    }

    /// The four values.
    public var description: String {
        "PreKeyPolicy(batch: \(oneTimePreKeyBatchSize), lowWaterMark: \(oneTimePreKeyLowWaterMark), "
            + "rotation: \(signedPreKeyRotationInterval)s, grace: \(signedPreKeyGracePeriod)s)"
    }
}
