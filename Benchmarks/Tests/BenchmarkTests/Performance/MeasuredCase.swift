import BenchmarkCases
import BenchmarkHarness
import XCTest

extension XCTestCase {
    /// XCTest's `measure` over one contender of one catalog case.
    ///
    /// The batch size is calibrated to about 10 ms, so that each of XCTest's iterations times
    /// many operations; a case's untimed preparation (for example encrypting the messages a
    /// decrypt batch consumes) runs outside the measured span. The interleaved comparison of
    /// the contenders is `swift run -c release bench` (same cases, same workloads). A workload
    /// that measures itself (`Workload.measured`: peak resident bytes) is run for its case's
    /// rounds and its figures printed instead. A case that cannot run here (`CaseSkipped`: the
    /// `age` command missing) is skipped.
    func measureCase(_ name: String, _ contender: Contender, file: StaticString = #filePath, line: UInt = #line) throws {
        guard let benchmark = BenchmarkCatalog.cases(matching: [name]).first(where: { $0.name == name }) else {
            XCTFail("no benchmark case named \(name)", file: file, line: line)
            return
        }
        let built: Workload?
        do {
            built = try benchmark.makeWorkload(for: contender)
        } catch let skip as CaseSkipped {
            throw XCTSkip("\(name): \(skip.reason)")
        }
        guard let workload = built else {
            throw XCTSkip("\(name) has no \(contender.rawValue) contender")
        }
        if let measured = workload.measured {
            // A figure that is not a time (the peak resident bytes of `age.memory.*`): XCTest's
            // `measure` would time seconds of disk work and fail on its spread; the figure itself
            // is measured as the bench run does, for its rounds, and printed.
            let rounds = benchmark.maximumRounds ?? 3
            for round in 1 ... rounds {
                try workload.prepare?(1)
                let figure = try measured(1)
                print("\(name) [\(contender.rawValue)] round \(round)/\(rounds): \(figure) \(benchmark.unit.rawValue)")
            }
            return
        }
        let runner = InterleavedRunner(configuration: RunConfiguration(rounds: 1, batchNanoseconds: 10_000_000, warmupBatches: 0))
        let batch = try benchmark.unit.fixedBatchSize ?? runner.calibrate(
            workload, multiple: benchmark.batchMultiple, clock: benchmark.requiredClock,
            minimumBatchNanoseconds: benchmark.unit.minimumBatchNanoseconds)
        print("\(name) [\(contender.rawValue)]: \(batch) operations per measured iteration")
        var failure: Error?
        measureMetrics([.wallClockTime], automaticallyStartMeasuring: false) {
            do {
                try workload.prepare?(batch)
                startMeasuring()
                try workload.run(batch)
                stopMeasuring()
            } catch {
                failure = error
            }
        }
        if let failure { XCTFail("\(name) [\(contender.rawValue)]: \(failure)", file: file, line: line) }
    }
}
