import SignalPrimitives

/// Suite `x25519-to-ed25519` (SPEC §1, §8): `x25519_pk` → `ed25519_pk` by XEdDSA's
/// `convert_mont` (bit 255 cleared, reduced mod p, y = (u − 1)/(u + 1), sign bit 0). The map is
/// total, so files normally hold no error tests; one that does is checked like any other.
public enum X25519ToEd25519Suite: ProtocolSuite {
    /// `"x25519-to-ed25519"`.
    public static let name = "x25519-to-ed25519"

    /// Converts `x25519_pk` and compares with `ed25519_pk`, or checks the expected error.
    /// - Throws: `VectorFailure` on a mismatch or a malformed test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let xBytes = try test.hex("x25519_pk")
        if let expected = test.expectedError {
            try ExpectedError.check(expected) {
                _ = try X25519.PublicKey(rawRepresentation: xBytes).convertToEd25519()
            }
            return .passed
        }
        let expected = try test.hex("ed25519_pk")
        let converted: Ed25519.PublicKey
        do {
            converted = try X25519.PublicKey(rawRepresentation: xBytes).convertToEd25519()
        } catch {
            throw VectorFailure("conversion failed with \(ExpectedError.name(of: error))")
        }
        try ExpectedError.equal(converted.rawRepresentation, expected, "ed25519_pk")
        return .passed
    }
}
