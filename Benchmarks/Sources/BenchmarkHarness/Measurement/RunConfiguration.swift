/// How long and how often the runner measures.
public struct RunConfiguration: Sendable, Equatable {
    /// Interleaved rounds per case; each round times one batch of every contender.
    public var rounds: Int
    /// The target duration of one timed batch, in nanoseconds (batch sizes are calibrated to it).
    public var batchNanoseconds: UInt64
    /// Untimed batches per contender before the rounds start.
    public var warmupBatches: Int

    /// A configuration with explicit values.
    public init(rounds: Int, batchNanoseconds: UInt64, warmupBatches: Int) {
        self.rounds = max(1, rounds)
        self.batchNanoseconds = max(1, batchNanoseconds)
        self.warmupBatches = max(0, warmupBatches)
    }

    /// The full run: 41 rounds of 4 ms batches per contender (about 0.5 s per contender and case).
    public static let full = RunConfiguration(rounds: 41, batchNanoseconds: 4_000_000, warmupBatches: 2)

    /// The CI smoke run: 9 rounds of 0.5 ms batches; a few seconds for the whole suite.
    public static let quick = RunConfiguration(rounds: 9, batchNanoseconds: 500_000, warmupBatches: 1)

    /// `quick` when `BENCH_QUICK` is set to anything but `0` or empty, else `full`;
    /// `BENCH_ROUNDS` overrides the number of rounds.
    public static func fromEnvironment(_ environment: [String: String]) -> RunConfiguration {
        let quickValue = environment["BENCH_QUICK"] ?? ""
        var configuration = (quickValue.isEmpty || quickValue == "0") ? full : quick
        if let rounds = environment["BENCH_ROUNDS"].flatMap({ Int($0) }), rounds > 0 {
            configuration.rounds = rounds
        }
        return configuration
    }
}
