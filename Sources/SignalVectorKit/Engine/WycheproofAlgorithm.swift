/// The `result` of a Wycheproof test.
public enum WycheproofExpectation: String, Sendable {
    /// The library must accept the input and reproduce the expected output.
    case valid
    /// The library must reject the input.
    case invalid
    /// Either outcome conforms (a wrong output never does).
    case acceptable
}

/// Whether a Wycheproof test group is run.
public enum WycheproofGroupDisposition: Equatable, Sendable {
    /// Run every test of the group.
    case run
    /// The group's parameters are not offered by the library: its tests count as skipped.
    case skip(String)
}

/// The checks for one Wycheproof `algorithm` (SPEC §8). One type per algorithm, listed in
/// `WycheproofRegistry`.
public protocol WycheproofAlgorithm: Sendable {
    /// The file's `algorithm` value, such as `"XDH"` or `"AES-GCM"`.
    static var name: String { get }

    /// Decides from the group's parameters whether its tests run or are skipped.
    /// - Throws: `VectorFailure` when a parameter the decision needs is missing or malformed
    ///   (every test of the group then counts as failed).
    static func disposition(of group: VectorTest) throws -> WycheproofGroupDisposition

    /// Runs one test of a group that `disposition(of:)` accepted.
    /// - Returns: `.passed`, or `.skipped` for a test outside what the library offers.
    /// - Throws: `VectorFailure` describing a mismatch or a malformed test.
    static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome
}

extension WycheproofAlgorithm {
    /// By default every group runs.
    /// - Throws: nothing; the signature follows the requirement, which may throw.
    public static func disposition(of group: VectorTest) throws -> WycheproofGroupDisposition { .run }
}
