/// One failed test (or an unreadable file or group) with the reason, as the runner reports it.
public struct VectorTestFailure: Sendable, Equatable {
    /// The test's `id` or `tcId`; `nil` when the failure concerns the whole file or a group.
    public let id: Int?
    /// What went wrong, in one line.
    public let message: String

    /// Creates a failure record.
    public init(id: Int?, message: String) {
        self.id = id
        self.message = message
    }
}

/// The outcome of running one vector file.
public struct VectorFileResult: Sendable, Equatable {
    /// Which of the two SPEC §8 shapes the file has.
    public enum Shape: String, Sendable {
        /// A Wycheproof file (`algorithm`, `testGroups`).
        case wycheproof
        /// A protocol file (`"schema": "sessionkit-vectors/2"`, `suite`, `tests`).
        case protocolSuite = "protocol"
        /// A C2SP/CCTV age vector (`expect: …` header lines and an age file): one test per file.
        case ageTestkit = "age-testkit"
        /// The file could not be read or has neither shape.
        case unreadable
    }

    /// The file path as given or found.
    public let path: String
    /// The file's shape.
    public var shape: Shape
    /// The suite (protocol files) or algorithm (Wycheproof files), or `"-"` when unknown.
    public var name: String
    /// Tests the library reproduced.
    public private(set) var passed = 0
    /// Tests that failed, plus one per unreadable file or group.
    public private(set) var failed = 0
    /// Tests whose parameters the library does not offer (never counted as passed).
    public private(set) var skipped = 0
    /// Every failure, in file order.
    public private(set) var failures: [VectorTestFailure] = []
    /// Why tests were skipped, with how many tests each reason covers.
    public private(set) var skipReasons: [String: Int] = [:]

    /// Creates an empty result for `path`.
    public init(path: String, shape: Shape = .unreadable, name: String = "-") {
        self.path = path
        self.shape = shape
        self.name = name
    }

    /// Whether no test failed.
    public var succeeded: Bool { failed == 0 }

    /// The number of tests run or skipped (failures included).
    public var total: Int { passed + failed + skipped }

    /// Counts a passing test.
    public mutating func recordPass() { passed += 1 }

    /// Counts a skipped test with its reason.
    public mutating func recordSkip(_ reason: String) {
        skipped += 1
        skipReasons[reason, default: 0] += 1
    }

    /// Counts a failure of test `id` (or of the file or a group when `id` is nil).
    public mutating func recordFailure(id: Int?, _ message: String) {
        failed += 1
        failures.append(VectorTestFailure(id: id, message: message))
    }

    /// Counts the outcome of one test.
    public mutating func record(_ outcome: VectorOutcome) {
        switch outcome {
        case .passed: recordPass()
        case let .skipped(reason): recordSkip(reason)
        }
    }
}
