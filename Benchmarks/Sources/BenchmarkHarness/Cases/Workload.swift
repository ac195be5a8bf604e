/// The work of one contender in one case, run in timed batches.
///
/// Everything a workload needs (keys, buffers, sessions) is created when the workload is
/// built, outside any timing. `run(n)` performs the operation `n` times; `prepare(n)`, when
/// present, runs untimed just before each timed batch of `n` (for example to encrypt the `n`
/// messages that a decrypt batch then consumes).
public struct Workload {
    /// Untimed set-up for the next batch of `n` operations.
    public let prepare: ((Int) throws -> Void)?
    /// Performs the operation `n` times.
    public let run: (Int) throws -> Void
    /// For a case whose figure is not a time (`CaseUnit.peakResidentBytes`): performs a batch
    /// of `n` operations and returns its figure for the whole batch, which the runner records
    /// instead of a clock reading. Nil for a timed workload.
    public let measured: ((Int) throws -> UInt64)?

    /// A workload from a batch function and an optional untimed preparation.
    public init(prepare: ((Int) throws -> Void)? = nil, run: @escaping (Int) throws -> Void) {
        self.prepare = prepare
        self.run = run
        self.measured = nil
    }

    /// A workload that measures itself: `measure(n)` performs `n` operations and returns the
    /// batch's figure (for example the peak resident bytes it added); `run` performs them
    /// without looking at the figure.
    public static func measuring(
        prepare: ((Int) throws -> Void)? = nil, _ measure: @escaping (Int) throws -> UInt64
    ) -> Workload {
        Workload(prepare: prepare, run: { n in _ = try measure(n) }, measured: measure)
    }

    private init(prepare: ((Int) throws -> Void)?, run: @escaping (Int) throws -> Void, measured: ((Int) throws -> UInt64)?) {
        self.prepare = prepare
        self.run = run
        self.measured = measured
    }

    /// A workload that calls `operation` once per iteration.
    public static func repeating(_ operation: @escaping () throws -> Void) -> Workload {
        Workload { n in
            for _ in 0..<n { try operation() }
        }
    }
}

/// Keeps a value alive and opaque to the optimizer, so the work that produced it cannot be
/// removed as dead code.
@inline(never)
public func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
