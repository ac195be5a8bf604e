import SignalPrimitives

/// Suite `ed25519-to-x25519` (SPEC §1, §8): `ed25519_pk` → `x25519_pk`, u = (1 + y) / (1 − y)
/// after the valid-point check. Error tests (`"error": "invalidKey"`) give a key that is not a
/// valid point: non-canonical, not on the curve, of small or mixed order.
public enum Ed25519ToX25519Suite: ProtocolSuite {
    /// `"ed25519-to-x25519"`.
    public static let name = "ed25519-to-x25519"

    /// Converts `ed25519_pk` and compares with `x25519_pk`, or checks the expected error.
    /// - Throws: `VectorFailure` on a mismatch or a malformed test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let edBytes = try test.hex("ed25519_pk")
        if let expected = test.expectedError {
            try ExpectedError.check(expected) {
                _ = try Ed25519.PublicKey(rawRepresentation: edBytes).convertToX25519()
            }
            return .passed
        }
        let expected = try test.hex("x25519_pk")
        let converted: X25519.PublicKey
        do {
            converted = try Ed25519.PublicKey(rawRepresentation: edBytes).convertToX25519()
        } catch {
            throw VectorFailure("conversion failed with \(ExpectedError.name(of: error))")
        }
        try ExpectedError.equal(converted.rawRepresentation, expected, "x25519_pk")
        return .passed
    }
}
