/// Measures the contenders of a case side by side in one process.
///
/// Each contender's batch size is calibrated so that one batch takes about
/// `batchNanoseconds`. Then, for every round, one batch of each contender is timed, in an
/// order that rotates from round to round (A B C, B C A, C A B, …), so that slow drifts of the
/// machine (frequency, other processes) fall on every contender alike. The result per
/// contender is the median over the rounds of the batch time divided by the batch size.
///
/// A case whose unit requires a clock (`CaseUnit.messagesPerSecond`: the wall clock) is timed
/// on it whatever the configuration says, its batches last at least the unit's
/// `minimumBatchNanoseconds`, and its batch sizes are multiples of its `batchMultiple`. A case
/// in bytes per message (`CaseUnit.bytesPerMessage`) is "timed" on the bytes-written counter
/// (`BenchClock.bytesWritten`): the same machinery, a count of bytes instead of nanoseconds.
public struct InterleavedRunner {
    /// The measuring parameters.
    public let configuration: RunConfiguration

    /// A runner with `configuration`.
    public init(configuration: RunConfiguration) { self.configuration = configuration }

    /// Builds, checks and measures `benchmark`. Failures (a workload that cannot be built, a
    /// check that finds different outputs, an operation that throws) are recorded in the result;
    /// a case that throws `CaseSkipped` is recorded as skipped.
    public func measure(_ benchmark: BenchmarkCase) -> CaseResult {
        var workloads: [(Contender, Workload)] = []
        do {
            for contender in benchmark.contenders {
                if let workload = try benchmark.makeWorkload(for: contender) {
                    workloads.append((contender, workload))
                }
            }
            try benchmark.runCheck()
        } catch let skip as CaseSkipped {
            return CaseResult(benchmark: benchmark, summaries: [:], batchSizes: [:], failure: nil, skipped: skip.reason)
        } catch {
            return CaseResult(benchmark: benchmark, summaries: [:], batchSizes: [:], failure: "\(error)")
        }
        do {
            let (summaries, batchSizes) = try measure(
                workloads, clock: benchmark.requiredClock, batchMultiple: benchmark.batchMultiple,
                minimumBatchNanoseconds: benchmark.unit.minimumBatchNanoseconds, maximumRounds: benchmark.maximumRounds,
                fixedBatchSize: benchmark.unit.fixedBatchSize)
            return CaseResult(benchmark: benchmark, summaries: summaries, batchSizes: batchSizes, failure: nil)
        } catch {
            return CaseResult(benchmark: benchmark, summaries: [:], batchSizes: [:], failure: "\(error)")
        }
    }

    /// Measures already-built workloads; returns the per-contender summaries and batch sizes.
    /// `clock` overrides the configuration's clock; batch sizes are multiples of `batchMultiple`
    /// and calibrated to at least `minimumBatchNanoseconds` (in the clock's units); at most
    /// `maximumRounds` rounds are run when it is given; with `fixedBatchSize` every batch has
    /// that size and nothing is calibrated.
    public func measure(
        _ workloads: [(Contender, Workload)], clock: BenchClock? = nil, batchMultiple: Int = 1,
        minimumBatchNanoseconds: UInt64 = 0, maximumRounds: Int? = nil, fixedBatchSize: Int? = nil
    ) throws -> ([Contender: SampleSummary], [Contender: Int]) {
        let clock = clock ?? configuration.clock
        var batchSizes: [Int] = []
        for (_, workload) in workloads {
            if let fixedBatchSize {
                batchSizes.append(max(1, fixedBatchSize))
                continue
            }
            batchSizes.append(try calibrate(
                workload, multiple: batchMultiple, clock: clock, minimumBatchNanoseconds: minimumBatchNanoseconds))
        }
        for (index, (_, workload)) in workloads.enumerated() {
            for _ in 0..<configuration.warmupBatches {
                _ = try time(workload, batchSizes[index], clock: clock)
            }
        }
        var samples = [[Double]](repeating: [], count: workloads.count)
        let rounds = min(configuration.rounds, max(1, maximumRounds ?? configuration.rounds))
        for round in 0..<rounds {
            for offset in 0..<workloads.count {
                let index = (round + offset) % workloads.count
                let nanoseconds = try time(workloads[index].1, batchSizes[index], clock: clock)
                samples[index].append(Double(nanoseconds) / Double(batchSizes[index]))
            }
        }
        var summaries: [Contender: SampleSummary] = [:]
        var sizes: [Contender: Int] = [:]
        for (index, (contender, _)) in workloads.enumerated() {
            summaries[contender] = SampleSummary(samples[index])
            sizes[contender] = batchSizes[index]
        }
        return (summaries, sizes)
    }

    /// The batch size whose run takes about `batchNanoseconds` (or `minimumBatchNanoseconds`
    /// when that is longer): a multiple of `multiple` (at least `multiple` itself, and at least
    /// 1), timed on `clock` (the configuration's by default).
    public func calibrate(
        _ workload: Workload, multiple: Int = 1, clock: BenchClock? = nil, minimumBatchNanoseconds: UInt64 = 0
    ) throws -> Int {
        let target = max(configuration.batchNanoseconds, minimumBatchNanoseconds)
        let clock = clock ?? configuration.clock
        let multiple = max(1, multiple)
        var size = multiple
        while true {
            let elapsed = max(try time(workload, size, clock: clock), 1)
            if elapsed >= target / 4 || size >= 1 << 30 {
                let scaled = Double(size) * Double(target) / Double(elapsed)
                return multiple * max(1, Int((scaled / Double(multiple)).rounded()))
            }
            // Grow quickly while far from the target, never by more than 16× at once.
            let factor = min(16, max(2, Int(target / elapsed)))
            size *= factor
        }
    }

    /// Runs the untimed preparation, then times one batch of `size` operations on `clock` (or
    /// returns the batch's own figure, for a workload that measures itself).
    func time(_ workload: Workload, _ size: Int, clock: BenchClock) throws -> UInt64 {
        try workload.prepare?(size)
        if let measured = workload.measured { return try measured(size) }
        let start = clock.now()
        try workload.run(size)
        let end = clock.now()
        return end &- start
    }
}
