@_spi(Testing) import SessionKit

/// The `padding` suite (SPEC §2, §8): `plaintext` → `padded`, checking both pad and unpad;
/// error tests give `padded` only and expect unpad to fail. An optional `content_type` (1
/// application content when absent, 2 a sender-key distribution) is the first padded byte:
/// valid tests pad and unpad with it, error tests unpad expecting it.
public enum PaddingSuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "padding"

    /// Runs one test.
    /// - Throws: `VectorFailure` when the library disagrees with the test, or `content_type`
    ///   is present but not 1 or 2.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let padded = try test.hex("padded")
        let contentType = try test.contentType()
        if let expected = test.expectedError {
            try ExpectedError.check(expected) { _ = try MessagePadding.unpad(padded, contentType: contentType) }
            return .passed
        }
        let plaintext = try test.hex("plaintext")
        try ExpectedError.equal(try MessagePadding.pad(plaintext, contentType: contentType), padded, "padded")
        try ExpectedError.equal(try MessagePadding.unpad(padded, contentType: contentType), plaintext, "unpadded plaintext")
        return .passed
    }
}
