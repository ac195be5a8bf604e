@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification

/// Suite `safety-number` (SPEC §7, §8): from `version`, `iterations`, `local_id`, `local_key`,
/// `remote_id`, `remote_key` (ids as UTF-8 text, used as their bytes), the library must give
/// `displayable` (60 digits) and `scannable` (hex, as the local party encodes it). The runner
/// also decodes the expected scannable form and checks that it equals the computed one.
public enum SafetyNumberSuite: ProtocolSuite {
    /// The suite name.
    public static let name = "safety-number"

    /// Runs one test.
    /// - Throws: `VectorFailure` when a field is missing or malformed, when the displayable or
    ///   scannable form differs, when the expected scannable form does not decode to the computed
    ///   one, or when an error test gets another error or none; an error the library throws on
    ///   a valid test is passed on as it is.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let version = try test.uint32("version")
        let iterations = try test.int("iterations")
        let localID = Array(try test.string("local_id").utf8)
        let remoteID = Array(try test.string("remote_id").utf8)
        let localKey = try test.hex("local_key")
        let remoteKey = try test.hex("remote_key")

        let compute = {
            try Fingerprint(version: version, iterations: iterations,
                            localIdentifier: localID, localIdentityKey: localKey,
                            remoteIdentifier: remoteID, remoteIdentityKey: remoteKey)
        }
        if let expected = test.expectedError {
            try ExpectedError.check(expected) { _ = try compute() }
            return .passed
        }

        let fingerprint = try compute()
        let displayable = try test.string("displayable")
        guard fingerprint.displayable.digits == displayable else {
            throw VectorFailure("displayable mismatch: got \(fingerprint.displayable.digits), expected \(displayable)")
        }
        let scannable = try test.hex("scannable")
        try ExpectedError.equal(fingerprint.scannable.serialized, scannable, "scannable")
        let decoded = try ScannableFingerprint(serialized: scannable)
        guard decoded == fingerprint.scannable else {
            throw VectorFailure("the expected scannable form does not decode to the computed fingerprint")
        }
        return .passed
    }
}
