/// How long and how much a `SessionManager`'s send log keeps (SPEC §9: "a log of what it sent,
/// per device and chain position, for a bounded time").
///
/// The log is off unless the app gives the manager a `SendLogStore`: it keeps plaintexts the
/// app may believe gone, for `retention` seconds. See the article "Recovering from Lost State".
public struct SendLogPolicy: Sendable, Hashable, CustomStringConvertible {
    /// How long an entry is kept after it was sent, in seconds (default 24 hours): the time a
    /// peer has to ask for a message again with a retry notice.
    public let retention: Int64
    /// The most entries kept in the whole log (default 10,000: one entry per recipient device
    /// for a pairwise message, one per group message); beyond it the oldest go, whatever their
    /// age, so the log's size is bounded by this many plaintexts.
    public let maximumEntries: Int

    /// A policy.
    /// - Throws: `SessionError.invalidConfiguration` unless `retention` and `maximumEntries`
    ///   are positive.
    public init(retention: Int64 = 24 * 3600, maximumEntries: Int = 10_000) throws(SessionError) {
        guard retention > 0 else { throw .invalidConfiguration("the send log's retention must be positive") }
        guard maximumEntries > 0 else { throw .invalidConfiguration("the send log's maximum entries must be positive") }
        self.retention = retention
        self.maximumEntries = maximumEntries
    }

    private init(validatedRetention retention: Int64, maximumEntries: Int) {
        self.retention = retention
        self.maximumEntries = maximumEntries
    }

    /// 24 hours, 10,000 entries.
    public static let `default` = SendLogPolicy(validatedRetention: 24 * 3600, maximumEntries: 10_000)

    /// The retention and the bound.
    public var description: String { "SendLogPolicy(retention: \(retention) s, maximumEntries: \(maximumEntries))" }
}
