/// The measurement of one case: a median per contender and the ratios between them.
public struct CaseResult {
    /// The case's identifier.
    public let name: String
    /// What one operation is.
    public let summary: String
    /// Primitives or protocol.
    public let group: CaseGroup
    /// The ratios the case aims for.
    public let targets: RatioTargets
    /// What the case's figures are (`figure(_:)`); medians and ratios are times either way
    /// (bytes, for a case in bytes per message).
    public let unit: CaseUnit
    /// The clock the case was measured on when it requires one (`BenchmarkCase.requiredClock`);
    /// nil when it was the run's.
    public let requiredClock: BenchClock?
    /// The per-contender sample summaries (absent contenders are missing).
    public let summaries: [Contender: SampleSummary]
    /// The calibrated batch size of each contender.
    public let batchSizes: [Contender: Int]
    /// Why the case could not be measured, if it could not.
    public let failure: String?
    /// Why the case was skipped (`CaseSkipped`: a tool it compares with is missing), if it was;
    /// a skipped case is not a failure.
    public let skipped: String?
    /// The most rounds the case was measured for (`BenchmarkCase.maximumRounds`), if capped.
    public let maximumRounds: Int?
    /// The medians of the baseline case (`targets.baseline`), when it was measured in the same
    /// run; set by `linkingBaselines(_:)`.
    public private(set) var baselineMedians: [Contender: Double] = [:]

    /// A result for `benchmark` (`skipped`: the reason it was skipped, if it was).
    public init(
        benchmark: BenchmarkCase, summaries: [Contender: SampleSummary], batchSizes: [Contender: Int],
        failure: String?, skipped: String? = nil
    ) {
        self.init(name: benchmark.name, summary: benchmark.summary, group: benchmark.group,
                  targets: benchmark.targets, summaries: summaries, batchSizes: batchSizes, failure: failure,
                  unit: benchmark.unit, clock: benchmark.requiredClock, skipped: skipped,
                  maximumRounds: benchmark.maximumRounds)
    }

    /// A result from its parts (`unit`: nanoseconds per operation unless given; `clock`: the
    /// clock the case requires, the unit's by default).
    public init(
        name: String, summary: String, group: CaseGroup, targets: RatioTargets,
        summaries: [Contender: SampleSummary], batchSizes: [Contender: Int], failure: String?,
        unit: CaseUnit = .nanosecondsPerOperation, clock: BenchClock? = nil, skipped: String? = nil,
        maximumRounds: Int? = nil
    ) {
        self.name = name
        self.summary = summary
        self.group = group
        self.targets = targets
        self.unit = unit
        self.requiredClock = unit.requiredClock ?? clock
        self.summaries = summaries
        self.batchSizes = batchSizes
        self.failure = failure
        self.skipped = skipped
        self.maximumRounds = maximumRounds ?? unit.maximumRounds
    }

    /// The median nanoseconds per operation of `contender`, if measured.
    public func median(_ contender: Contender) -> Double? { summaries[contender]?.median }

    /// The median of `contender` in the case's unit (`unit`): nanoseconds per operation, or
    /// messages per second for a throughput case.
    public func figure(_ contender: Contender) -> Double? {
        median(contender).map { unit.figure(nanosecondsPerOperation: $0) }
    }

    /// The first and third quartiles of `contender` in the case's unit (for a throughput case,
    /// the messages per second of the third and first quartiles of the times).
    public func figureQuartiles(_ contender: Contender) -> (lower: Double, upper: Double)? {
        guard let summary = summaries[contender] else { return nil }
        let (a, b) = (unit.figure(nanosecondsPerOperation: summary.lowerQuartile),
                      unit.figure(nanosecondsPerOperation: summary.upperQuartile))
        return (min(a, b), max(a, b))
    }

    /// library / floor, when both were measured. Ratios are always of times per operation, so
    /// for a throughput case this is floor messages per second / library messages per second.
    public var ratioToFloor: Double? { ratio(median(.library), median(.floor)) }

    /// library / swift-crypto, when both were measured.
    public var ratioToSwiftCrypto: Double? { ratio(median(.library), median(.swiftCrypto)) }

    /// swift-crypto / floor, when both were measured (how the two reference points compare).
    public var swiftCryptoToFloor: Double? { ratio(median(.swiftCrypto), median(.floor)) }

    /// This case's time over its baseline case's time for `contender` (library by default),
    /// when both were measured in the same run.
    public func ratioToBaseline(_ contender: Contender = .library) -> Double? {
        ratio(median(contender), baselineMedians[contender])
    }

    /// This case's messages per second over its baseline case's (1 / `ratioToBaseline`), for a
    /// throughput case; nil otherwise or when either was not measured.
    public func throughputRatioToBaseline(_ contender: Contender = .library) -> Double? {
        guard unit.higherIsBetter, let ratio = ratioToBaseline(contender), ratio > 0 else { return nil }
        return 1 / ratio
    }

    /// Whether the library ratios meet the targets (nil when there is nothing to compare).
    public var meetsTargets: Bool? {
        var verdicts: [Bool] = []
        if let limit = targets.floor, let value = ratioToFloor { verdicts.append(value <= limit) }
        if let limit = targets.swiftCrypto, let value = ratioToSwiftCrypto { verdicts.append(value <= limit) }
        if let limit = targets.baseline?.maximum, let value = ratioToBaseline() { verdicts.append(value <= limit) }
        if let limit = targets.libraryMaximum, let value = figure(.library) { verdicts.append(value <= limit) }
        return verdicts.isEmpty ? nil : !verdicts.contains(false)
    }

    /// `results` with each case's baseline medians filled in from the case it names (cases
    /// whose baseline is missing from `results` or failed keep none).
    public static func linkingBaselines(_ results: [CaseResult]) -> [CaseResult] {
        let byName = Dictionary(results.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return results.map { result in
            guard let name = result.targets.baseline?.caseName, let baseline = byName[name], baseline.failure == nil else {
                return result
            }
            var linked = result
            linked.baselineMedians = baseline.summaries.mapValues(\.median)
            return linked
        }
    }

    private func ratio(_ numerator: Double?, _ denominator: Double?) -> Double? {
        guard let numerator, let denominator, denominator > 0 else { return nil }
        return numerator / denominator
    }
}
