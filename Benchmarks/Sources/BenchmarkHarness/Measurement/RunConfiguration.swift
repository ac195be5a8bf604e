/// How long and how often the runner measures.
public struct RunConfiguration: Sendable, Equatable {
    /// Interleaved rounds per case; each round times one batch of every contender.
    public var rounds: Int
    /// The target duration of one timed batch, in nanoseconds (batch sizes are calibrated to it).
    public var batchNanoseconds: UInt64
    /// Untimed batches per contender before the rounds start.
    public var warmupBatches: Int
    /// The clock batches are timed with.
    public var clock: BenchClock

    /// A configuration with explicit values.
    public init(rounds: Int, batchNanoseconds: UInt64, warmupBatches: Int, clock: BenchClock = .threadCPU) {
        self.rounds = max(1, rounds)
        self.batchNanoseconds = max(1, batchNanoseconds)
        self.warmupBatches = max(0, warmupBatches)
        self.clock = clock
    }

    /// The full run: 101 rounds of 1 ms batches per contender (about 0.1 s per contender and
    /// case, plus calibration; short batches are rarely cut by the scheduler).
    public static let full = RunConfiguration(rounds: 101, batchNanoseconds: 1_000_000, warmupBatches: 3)

    /// The CI smoke run: 9 rounds of 0.5 ms batches; a few seconds for the whole suite.
    public static let quick = RunConfiguration(rounds: 9, batchNanoseconds: 500_000, warmupBatches: 1)

    /// `quick` when `BENCH_QUICK` is set to anything but `0` or empty, else `full`;
    /// `BENCH_ROUNDS` overrides the number of rounds; `BENCH_CLOCK=wall` times with the wall
    /// clock instead of the thread's CPU time.
    public static func fromEnvironment(_ environment: [String: String]) -> RunConfiguration {
        let quickValue = environment["BENCH_QUICK"] ?? ""
        var configuration = (quickValue.isEmpty || quickValue == "0") ? full : quick
        if let rounds = environment["BENCH_ROUNDS"].flatMap({ Int($0) }), rounds > 0 {
            configuration.rounds = rounds
        }
        if let clock = environment["BENCH_CLOCK"].flatMap(BenchClock.init(rawValue:)), clock != .bytesWritten {
            configuration.clock = clock
        }
        return configuration
    }
}
