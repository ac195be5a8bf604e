import SignalPrimitives

/// Suite `ed25519-seed-to-x25519` (SPEC §1, §8): `ed25519_seed` → `x25519_sk` (the clamped
/// first half of SHA-512(seed)) and `x25519_pk` (its X25519 public key).
public enum Ed25519SeedToX25519Suite: ProtocolSuite {
    /// `"ed25519-seed-to-x25519"`.
    public static let name = "ed25519-seed-to-x25519"

    /// Converts the seed and compares both outputs; also checks that the X25519 public key
    /// equals the ed→x conversion of the Ed25519 public key (SPEC §1 defines both routes).
    /// - Throws: `VectorFailure` on a mismatch or a malformed test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let seed = try test.hex("ed25519_seed")
        if let expected = test.expectedError {
            try ExpectedError.check(expected) {
                _ = try Ed25519.PrivateKey(seed: seed).convertToX25519()
            }
            return .passed
        }
        let expectedSecret = try test.hex("x25519_sk")
        let expectedPublic = try test.hex("x25519_pk")
        let edKey: Ed25519.PrivateKey
        do {
            edKey = try Ed25519.PrivateKey(seed: seed)
        } catch {
            throw VectorFailure("seed rejected with \(ExpectedError.name(of: error))")
        }
        let xKey = edKey.convertToX25519()
        try ExpectedError.equal(xKey.rawRepresentation, expectedSecret, "x25519_sk")
        try ExpectedError.equal(xKey.publicKey.rawRepresentation, expectedPublic, "x25519_pk")
        let viaPublic: X25519.PublicKey
        do {
            viaPublic = try edKey.publicKey.convertToX25519()
        } catch {
            throw VectorFailure("ed→x conversion of the seed's public key failed with \(ExpectedError.name(of: error))")
        }
        try ExpectedError.equal(viaPublic.rawRepresentation, expectedPublic, "ed→x of the Ed25519 public key")
        return .passed
    }
}
