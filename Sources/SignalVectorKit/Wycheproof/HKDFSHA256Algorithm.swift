import SignalPrimitives

/// Wycheproof `HKDF-SHA-256` (`HkdfTest` groups): `ikm`, `salt`, `info`, `size`, `okm`.
///
/// A valid test must derive exactly `okm`. An invalid test (an output size above 255 × 32
/// bytes) must throw. An acceptable test may throw but must not derive anything but `okm`.
///
/// RFC 5869 allows output sizes 0 … 255 × 32 only. For a `size` outside that range the runner
/// never asks for `size` bytes (a hostile file could name 2^62): it asks the library for
/// `outputRange.upperBound + 1` bytes (or the negative `size` itself), the smallest request
/// RFC 5869 forbids, and the library must reject it; such a test can never be valid.
public enum HKDFSHA256Algorithm: WycheproofAlgorithm {
    /// `"HKDF-SHA-256"`.
    public static let name = "HKDF-SHA-256"
    /// `"HkdfTest"`.
    public static let groupType = "HkdfTest"

    /// The output sizes RFC 5869 allows for SHA-256: 0 … 255 × 32 bytes.
    public static let outputRange = 0...(255 * 32)

    /// Checks one test.
    /// - Throws: `VectorFailure` when `ikm`, `salt`, `info`, `size` or `okm` is missing or
    ///   malformed, when a valid test does not derive `okm` or has a `size` outside
    ///   `outputRange`, when an invalid test or a test with a `size` outside `outputRange`
    ///   derives anything, or when an acceptable test derives anything but `okm`.
    public static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome {
        let ikm = try test.hex("ikm")
        let salt = try test.hex("salt")
        let info = try test.hex("info")
        let size = try test.int("size")
        let expected = try test.hex("okm")

        guard outputRange.contains(size) else {
            if expectation == .valid {
                throw VectorFailure("size \(size) is outside RFC 5869's 0 … \(outputRange.upperBound) bytes, so the test cannot be valid")
            }
            let request = size < 0 ? size : outputRange.upperBound + 1
            let rejected: Bool
            do {
                _ = try HKDF.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: request)
                rejected = false
            } catch {
                rejected = true
            }
            guard rejected else {
                throw VectorFailure("derived \(request) bytes (for size \(size)) where RFC 5869 forbids it")
            }
            return .passed
        }

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
