import SignalPrimitives

/// Wycheproof `HMACSHA256` (`MacTest` groups): the group's `tagSize` in bits, and per test
/// `key`, `msg`, `tag`.
///
/// A group with a `tagSize` below 256 compares the tag truncated to that size. A valid test
/// must compute `tag` and verify it; an invalid test must not verify (a tag of another length
/// than `tagSize` never verifies); an acceptable test may do either.
public enum HMACSHA256Algorithm: WycheproofAlgorithm {
    /// `"HMACSHA256"`.
    public static let name = "HMACSHA256"
    /// `"MacTest"`.
    public static let groupType = "MacTest"

    /// Runs `MacTest` groups whose `tagSize` is a whole number of bytes from 8 to 256 bits.
    /// - Throws: `VectorFailure` when `type` or `tagSize` is missing.
    public static func disposition(of group: VectorTest) throws -> WycheproofGroupDisposition {
        let typeDisposition = try groupTypeDisposition(of: group)
        guard typeDisposition == .run else { return typeDisposition }
        let tagSize = try group.int("tagSize")
        guard tagSize % 8 == 0, (8...8 * HMACSHA256.byteCount).contains(tagSize) else {
            return .skip("HMAC-SHA256 tagSize \(tagSize) is not offered")
        }
        return .run
    }

    /// Checks one test.
    /// - Throws: `VectorFailure` when the group's `tagSize` or the test's `key`, `msg` or `tag`
    ///   is missing or malformed, when a valid test's tag differs or does not verify, or when an
    ///   invalid tag verifies.
    public static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome {
        let tagByteCount = try group.int("tagSize") / 8
        let key = try test.hex("key")
        let message = try test.hex("msg")
        let tag = try test.hex("tag")

        let verifies = HMACSHA256.isValidAuthenticationCode(tag, for: message, using: key, truncatedTo: tagByteCount)
        switch (expectation, verifies) {
        case (.valid, _):
            let computed = Array(HMACSHA256.authenticationCode(for: message, using: key).prefix(tagByteCount))
            try ExpectedError.equal(computed, tag, "tag")
            guard verifies else { throw VectorFailure("the expected tag did not verify") }
        case (.invalid, true):
            throw VectorFailure("an invalid tag verified")
        default:
            break
        }
        return .passed
    }
}
