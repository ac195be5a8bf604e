/// What the figures of a case are (the `library_ns`, `floor_ns` and `swiftcrypto_ns` fields of
/// `latest.json`, the contender columns of the table).
///
/// The runner always measures a batch's clock reading over its size (nanoseconds per operation,
/// or bytes per message on the bytes-written clock); the unit says how that median is reported.
/// Ratios and targets stay ratios of those medians whatever the unit (library / floor ≤ target
/// means the same on every row: for a throughput row, a ratio of times per message).
public enum CaseUnit: String, Sendable, CaseIterable {
    /// Nanoseconds per operation, timed on the run's clock (thread CPU time unless
    /// `BENCH_CLOCK=wall`). Lower is better.
    case nanosecondsPerOperation = "ns/op"
    /// Messages per second: an operation is one message (encrypted by its sender and decrypted
    /// by its receiver), batches are timed on the wall clock (the work runs on other threads
    /// than the measuring one, on several cores at once), and the figure is 10⁹ / the median
    /// nanoseconds per message. Higher is better.
    case messagesPerSecond = "msgs/s"
    /// Bytes written per message: an operation is one message persisted by a store, batches
    /// are "timed" on the process's count of bytes written (`BenchClock.bytesWritten`, the
    /// `wchar` of `/proc/self/io`), and the figure is the median bytes per message. Lower is
    /// better; the ratios are ratios of bytes.
    case bytesPerMessage = "bytes/msg"
    /// Peak resident bytes one operation adds over the process's resident set just before it
    /// (Linux: `VmHWM` after the operation minus `VmRSS` before it, the peak reset through
    /// `/proc/self/clear_refs` and the allocator's free pages returned first;
    /// `PeakResidentMemory`). The workload measures itself (`Workload.measured`), batches are
    /// one operation, at most 3 rounds. Lower is better; the figure has an absolute target.
    case peakResidentBytes = "bytes-peak"

    /// The clock a case in this unit must be timed on, whatever the run's clock; nil for the
    /// run's clock.
    public var requiredClock: BenchClock? {
        switch self {
        case .nanosecondsPerOperation: nil
        case .messagesPerSecond: .wall
        case .bytesPerMessage: .bytesWritten
        case .peakResidentBytes: nil
        }
    }

    /// The shortest batch a case in this unit is calibrated to, whatever the configuration
    /// says, in the units of its clock (`requiredClock`): a throughput batch starts and joins
    /// tasks (tens of microseconds), which must stay negligible against the batch, alike for
    /// one peer and for many (20 ms); a bytes batch must span at least one automatic
    /// checkpoint of the WAL (SQLite checkpoints when the WAL reaches 1,000 pages, about 1 MiB
    /// with 1 KiB pages), so that it holds the messages' share of checkpoint writes (1 MiB).
    public var minimumBatchNanoseconds: UInt64 {
        switch self {
        case .nanosecondsPerOperation: 0
        case .messagesPerSecond: 20_000_000
        case .bytesPerMessage: 1 << 20
        case .peakResidentBytes: 0
        }
    }

    /// The most rounds a case in this unit is measured for, whatever the configuration says
    /// (nil: the configuration's). Bytes written repeat almost exactly from batch to batch (they
    /// do not depend on the machine's load), and a 1 MiB batch of SQLite commits can take seconds,
    /// so the bytes rows stop after 9 rounds, the smoke run's count.
    public var maximumRounds: Int? {
        switch self {
        case .nanosecondsPerOperation, .messagesPerSecond: nil
        case .bytesPerMessage: 9
        case .peakResidentBytes: 3
        }
    }

    /// The batch size a case in this unit always uses (nil: calibrated): a peak of memory is
    /// a figure of one operation, not a sum over a batch.
    public var fixedBatchSize: Int? { self == .peakResidentBytes ? 1 : nil }

    /// Whether a larger figure is better (throughput) rather than a smaller one (time).
    public var higherIsBetter: Bool { self == .messagesPerSecond }

    /// `nanoseconds` per operation expressed in this unit.
    public func figure(nanosecondsPerOperation nanoseconds: Double) -> Double {
        switch self {
        case .nanosecondsPerOperation: nanoseconds
        case .messagesPerSecond: nanoseconds > 0 ? 1e9 / nanoseconds : .infinity
        case .bytesPerMessage, .peakResidentBytes: nanoseconds
        }
    }
}
