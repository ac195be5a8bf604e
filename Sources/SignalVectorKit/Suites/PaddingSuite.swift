@_spi(Testing) import SessionKit

/// The `padding` suite (SPEC §2, §8): `plaintext` → `padded`, checking both pad and unpad;
/// error tests give `padded` only and expect unpad to fail.
public enum PaddingSuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "padding"

    /// Runs one test.
    /// - Throws: `VectorFailure` when the library disagrees with the test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let padded = try test.hex("padded")
        if let expected = test.expectedError {
            try ExpectedError.check(expected) { _ = try MessagePadding.unpad(padded) }
            return .passed
        }
        let plaintext = try test.hex("plaintext")
        try ExpectedError.equal(try MessagePadding.pad(plaintext), padded, "padded")
        try ExpectedError.equal(try MessagePadding.unpad(padded), plaintext, "unpadded plaintext")
        return .passed
    }
}
