/// What the figures of a case are (the `library_ns`, `floor_ns` and `swiftcrypto_ns` fields of
/// `latest.json`, the contender columns of the table).
///
/// The runner always measures nanoseconds per operation (a batch's time over its size); the
/// unit only says how that median is reported. Ratios and targets stay ratios of *times per
/// operation* whatever the unit (library / floor ≤ target means the same on every row).
public enum CaseUnit: String, Sendable, CaseIterable {
    /// Nanoseconds per operation, timed on the run's clock (thread CPU time unless
    /// `BENCH_CLOCK=wall`). Lower is better.
    case nanosecondsPerOperation = "ns/op"
    /// Messages per second: an operation is one message (encrypted by its sender and decrypted
    /// by its receiver), batches are timed on the wall clock (the work runs on other threads
    /// than the measuring one, on several cores at once), and the figure is 10⁹ / the median
    /// nanoseconds per message. Higher is better.
    case messagesPerSecond = "msgs/s"

    /// The clock a case in this unit must be timed on, whatever the run's clock; nil for the
    /// run's clock.
    public var requiredClock: BenchClock? {
        switch self {
        case .nanosecondsPerOperation: nil
        case .messagesPerSecond: .wall
        }
    }

    /// The shortest batch a case in this unit is calibrated to, whatever the configuration
    /// says: a throughput batch starts and joins tasks (tens of microseconds), which must stay
    /// negligible against the batch, alike for one peer and for many.
    public var minimumBatchNanoseconds: UInt64 {
        switch self {
        case .nanosecondsPerOperation: 0
        case .messagesPerSecond: 20_000_000
        }
    }

    /// Whether a larger figure is better (throughput) rather than a smaller one (time).
    public var higherIsBetter: Bool { self == .messagesPerSecond }

    /// `nanoseconds` per operation expressed in this unit.
    public func figure(nanosecondsPerOperation nanoseconds: Double) -> Double {
        switch self {
        case .nanosecondsPerOperation: nanoseconds
        case .messagesPerSecond: nanoseconds > 0 ? 1e9 / nanoseconds : .infinity
        }
    }
}
