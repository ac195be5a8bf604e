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

    /// The group `type` whose tests this algorithm reads, such as `"XdhComp"`. Files of the same
    /// `algorithm` with other group types (Wycheproof's `x25519_asn_test.json` holds
    /// `XdhAsnComp` groups with DER keys) are skipped.
    static var groupType: String { get }

    /// Decides from the group's `type` and parameters whether its tests run or are skipped.
    /// Implementations start with `groupTypeDisposition(of:)`.
    /// - Throws: `VectorFailure` when `type` or a parameter the decision needs is missing or
    ///   malformed (every test of the group then counts as failed).
    static func disposition(of group: VectorTest) throws -> WycheproofGroupDisposition

    /// Runs one test of a group that `disposition(of:)` accepted.
    /// - Returns: `.passed`, or `.skipped` for a test outside what the library offers.
    /// - Throws: `VectorFailure` describing a mismatch or a malformed test.
    static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome
}

extension WycheproofAlgorithm {
    /// `.run` for a group whose `type` is `groupType`, `.skip` for any other type.
    /// - Throws: `VectorFailure` when the group has no string `type`.
    public static func groupTypeDisposition(of group: VectorTest) throws -> WycheproofGroupDisposition {
        let type = try group.string("type")
        guard type == groupType else {
            return .skip("\(name) group type \(type) is not read (only \(groupType))")
        }
        return .run
    }

    /// By default every group of type `groupType` runs and the others are skipped.
    /// - Throws: `VectorFailure` when the group has no string `type`.
    public static func disposition(of group: VectorTest) throws -> WycheproofGroupDisposition {
        try groupTypeDisposition(of: group)
    }
}
