/// Which part of the suite a case belongs to.
public enum CaseGroup: String, Sendable {
    /// One primitive of SignalPrimitives.
    case primitives
    /// A protocol operation of SessionKit or Verification.
    case `protocol`
    /// SessionKit's `SessionManager` end to end (actors, store, trust evaluator, sessions).
    case manager
    /// A `SessionManager` over a durable store (SessionKitSQLite): messages persisted to a file.
    case store
    /// Whole age files on disk (SPEC §10): hundreds of MiB per operation, other processes (the
    /// `age` command) and peak resident memory; timed on the wall clock or measured by the
    /// workload, a few rounds.
    case files
}

/// The ratios a case aims for (reported, never asserted: the machines are noisy).
public struct RatioTargets: Sendable, Equatable {
    /// The largest acceptable library / floor ratio.
    public var floor: Double?
    /// The largest acceptable library / swift-crypto ratio.
    public var swiftCrypto: Double?
    /// The largest acceptable ratio of this case's library time to another case's library
    /// time (for example a forged message against 40 previous sessions against none).
    public var baseline: BaselineTarget?
    /// The largest acceptable library figure itself, in the case's unit (an absolute target,
    /// such as at most 2,048 bytes written per message), whatever the floor does.
    public var libraryMaximum: Double?

    /// Targets against the floor and, optionally, swift-crypto, another case and an absolute
    /// maximum of the library's figure.
    public init(
        floor: Double? = nil, swiftCrypto: Double? = nil, baseline: BaselineTarget? = nil, libraryMaximum: Double? = nil
    ) {
        self.floor = floor
        self.swiftCrypto = swiftCrypto
        self.baseline = baseline
        self.libraryMaximum = libraryMaximum
    }
}

/// A target relative to another case of the same run: library(this) / library(`caseName`)
/// must not exceed `maximum`.
public struct BaselineTarget: Sendable, Equatable {
    /// The name of the case compared with.
    public var caseName: String
    /// The largest acceptable ratio.
    public var maximum: Double

    /// A target of at most `maximum` × the library time of `caseName`.
    public init(caseName: String, maximum: Double) {
        self.caseName = caseName
        self.maximum = maximum
    }

    /// A target for a throughput case (`CaseUnit.messagesPerSecond`): at least `minimum` ×
    /// the messages per second of `caseName`, which is at most 1 / `minimum` × its time per
    /// message (`maximum`, the form every target is kept in).
    public init(caseName: String, minimumThroughputRatio minimum: Double) {
        self.init(caseName: caseName, maximum: 1 / minimum)
    }

    /// The least acceptable ratio of messages per second (1 / `maximum`), for throughput cases.
    public var minimumThroughputRatio: Double { 1 / maximum }
}

/// One benchmark: the same work done by the library, by the libsodium floor and, where it has
/// the primitives, by swift-crypto.
///
/// The workloads are built lazily by the runner (so a case that cannot be built fails alone),
/// and `check` runs before any timing to confirm that the contenders compute the same bytes.
public struct BenchmarkCase {
    /// A stable identifier, such as `aes256gcm.seal.1KiB`.
    public let name: String
    /// What one operation is, in a few words.
    public let summary: String
    /// Primitives or protocol.
    public let group: CaseGroup
    /// The ratios this case aims for.
    public let targets: RatioTargets
    /// What the case's figures are (nanoseconds per operation unless it says otherwise).
    public let unit: CaseUnit
    /// The clock the case is timed on whatever the run's clock is (nil: the run's): the unit's
    /// (`CaseUnit.requiredClock`) or, for a case in nanoseconds per operation whose work runs on
    /// other threads than the measuring one (an async store), the wall clock.
    public let requiredClock: BenchClock?
    /// Every batch size of the case is a multiple of this (at least 1): a case whose operations
    /// are spread over several parties (one message to each of 100 peers) keeps every party busy
    /// in every timed batch.
    public let batchMultiple: Int
    /// The most rounds the case is measured for, whatever the configuration says (nil: the
    /// configuration's, or its unit's `CaseUnit.maximumRounds`): operations that take seconds.
    public let maximumRounds: Int?
    let builders: [Contender: () throws -> Workload]
    let check: (() throws -> Void)?

    /// A case. `floor` is required; `library` and `swiftCrypto` may be absent. `unit` and
    /// `batchMultiple` are those of a throughput case; the defaults are nanoseconds per
    /// operation and any batch size. `clock` times the case on that clock whatever the run's
    /// (the unit's own clock, when it has one, wins). `maximumRounds` caps the rounds (with the
    /// unit's own cap, the smaller wins).
    public init(
        name: String, summary: String, group: CaseGroup, targets: RatioTargets = RatioTargets(),
        unit: CaseUnit = .nanosecondsPerOperation, batchMultiple: Int = 1, clock: BenchClock? = nil,
        maximumRounds: Int? = nil,
        library: (() throws -> Workload)?, floor: @escaping () throws -> Workload,
        swiftCrypto: (() throws -> Workload)?, check: (() throws -> Void)? = nil
    ) {
        self.name = name
        self.summary = summary
        self.group = group
        self.targets = targets
        self.unit = unit
        self.requiredClock = unit.requiredClock ?? clock
        self.batchMultiple = max(1, batchMultiple)
        switch (maximumRounds, unit.maximumRounds) {
        case let (own?, unit?): self.maximumRounds = max(1, min(own, unit))
        case let (own?, nil): self.maximumRounds = max(1, own)
        case let (nil, unit): self.maximumRounds = unit
        }
        var builders: [Contender: () throws -> Workload] = [.floor: floor]
        if let library { builders[.library] = library }
        if let swiftCrypto { builders[.swiftCrypto] = swiftCrypto }
        self.builders = builders
        self.check = check
    }

    /// The contenders this case measures, in a fixed order.
    public var contenders: [Contender] { Contender.allCases.filter { builders[$0] != nil } }

    /// Builds the workload of one contender, or returns nil when the case has none.
    public func makeWorkload(for contender: Contender) throws -> Workload? {
        try builders[contender]?()
    }

    /// Runs the cross-check of the contenders' outputs, if the case has one.
    public func runCheck() throws { try check?() }
}

/// Thrown by a workload builder or a check when the case cannot run on this machine (a tool it
/// compares with is not installed): the case is reported as skipped, with `reason`, and the
/// run does not fail.
public struct CaseSkipped: Error, CustomStringConvertible {
    /// Why the case was skipped (and how to make it run).
    public let reason: String

    /// A skip with a reason.
    public init(_ reason: String) { self.reason = reason }

    /// The reason.
    public var description: String { reason }
}

/// A cross-check between contenders that found different results.
public struct CheckFailure: Error, CustomStringConvertible {
    /// What differed.
    public let description: String

    /// A failure with a message.
    public init(_ description: String) { self.description = description }

    /// Throws unless `a` and `b` are equal.
    public static func expect<T: Equatable>(_ a: T, equals b: T, _ what: @autoclosure () -> String) throws {
        guard a == b else { throw CheckFailure("\(what()): \(a) != \(b)") }
    }

    /// Throws unless `condition` holds.
    public static func expect(_ condition: Bool, _ what: @autoclosure () -> String) throws {
        guard condition else { throw CheckFailure(what()) }
    }
}
