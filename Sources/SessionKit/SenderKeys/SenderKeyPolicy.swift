/// When this device's sender-key chain for a group is replaced, besides when a member leaves
/// (`SessionManager.removeMembers`): after a number of messages or an age, whichever comes
/// first. A chain that is replaced now and then limits what a leaked chain key reads (every
/// later message of that chain) to what the chain sends until it is replaced.
///
/// Defaults: 1,000 messages or 7 days. A chain stored before chains kept their creation time
/// (persisted version 2) has no age: only its message count applies to it.
public struct SenderKeyPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The default message count, 1,000.
    public static let defaultMaximumMessages: UInt64 = 1_000
    /// The default age, 7 days in seconds.
    public static let defaultMaximumAge: Int64 = 7 * 24 * 3600

    /// A chain that has sent this many messages is replaced before it sends another.
    public let maximumMessages: UInt64
    /// A chain this many seconds old (by the manager's clock) is replaced before it sends again.
    public let maximumAge: Int64

    /// The defaults: 1,000 messages or 7 days.
    public static let `default` = SenderKeyPolicy(validatedMaximumMessages: defaultMaximumMessages, maximumAge: defaultMaximumAge)

    /// Creates a policy.
    /// - Throws: `SessionError.invalidConfiguration` unless both limits are at least 1.
    public init(maximumMessages: UInt64 = defaultMaximumMessages, maximumAge: Int64 = defaultMaximumAge) throws(SessionError) {
        guard maximumMessages >= 1 else { throw .invalidConfiguration("maximumMessages must be at least 1") }
        guard maximumAge >= 1 else { throw .invalidConfiguration("maximumAge must be at least 1 second") }
        self.init(validatedMaximumMessages: maximumMessages, maximumAge: maximumAge)
    }

    private init(validatedMaximumMessages: UInt64, maximumAge: Int64) {
        maximumMessages = validatedMaximumMessages
        self.maximumAge = maximumAge
    }

    /// Whether `chain` must be replaced before it sends at `now`: it has sent `maximumMessages`
    /// (a chain starts at iteration 0, so its iteration is the count), or it is `maximumAge`
    /// old (a chain without a creation time has no age).
    public func isRotationDue(_ chain: SenderKeySendingChain, now: Timestamp) -> Bool {
        if chain.iteration >= maximumMessages { return true }
        guard let createdAt = chain.createdAt else { return false }
        return now.seconds(since: createdAt) >= maximumAge
    }

    /// The values.
    public var description: String { "SenderKeyPolicy(maximumMessages: \(maximumMessages), maximumAge: \(maximumAge)s)" }
}
