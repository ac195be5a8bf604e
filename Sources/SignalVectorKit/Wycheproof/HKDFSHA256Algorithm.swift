import SignalPrimitives

/// Wycheproof `HKDF-SHA-256` (`HkdfTest` groups): `ikm`, `salt`, `info`, `size`, `okm`.
///
/// A valid test must derive exactly `okm`. An invalid test (an output size above 255 × 32
/// bytes) must throw. An acceptable test may throw but must not derive anything but `okm`.
public enum HKDFSHA256Algorithm: WycheproofAlgorithm {
    /// `"HKDF-SHA-256"`.
    public static let name = "HKDF-SHA-256"

    /// Checks one test.
    /// - Throws: `VectorFailure` when `ikm`, `salt`, `info`, `size` or `okm` is missing or
    ///   malformed, when a valid test does not derive `okm`, when an invalid test derives
    ///   anything, or when an acceptable test derives anything but `okm`.
    public static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome {
        let ikm = try test.hex("ikm")
        let salt = try test.hex("salt")
        let info = try test.hex("info")
        let size = try test.int("size")
        let expected = try test.hex("okm")

        let derived: [UInt8]
        do {
            derived = try HKDF.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: size)
        } catch {
            if expectation == .valid { throw VectorFailure("derivation failed (\(error))") }
            return .passed
        }
        if expectation == .invalid {
            throw VectorFailure("derived \(size) bytes where the test expects an error")
        }
        try ExpectedError.equal(derived, expected, "okm")
        return .passed
    }
}
