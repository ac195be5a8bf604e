@_spi(Testing) import SessionKit
import SessionKitMLKEM
import SignalPrimitives

/// Wycheproof `ML-KEM` with `parameterSet` ML-KEM-768, in its two group types (SPEC §8), run
/// with `SwiftCryptoMLKEM768` (the library's adapter) and SessionKit's `KEMEncapsulationKey`:
///
/// - `MLKEMTest` (`seed`, `ek`, `c`, `K`): key generation from `seed` must give `ek`, and
///   decapsulating `c` must give `K` (implicit rejection included). An invalid test (a seed or
///   a ciphertext of the wrong length) must be refused by key generation or decapsulation.
/// - `MLKEMEncapsTest` (`ek`, `m`, `c`, `K`): an invalid `ek` must be refused as `invalidKey`
///   (by `KEMEncapsulationKey`'s FIPS 203 input check, and by the adapter); a valid `ek` must be
///   accepted and encapsulated to (a 1088-byte ciphertext and a 32-byte secret). The adapter
///   draws its own randomness, so `c` and `K` are not compared (SPEC §8 allows exactly this).
///
/// Groups of another parameter set are skipped.
public enum MLKEMAlgorithm: WycheproofAlgorithm {
    /// `"ML-KEM"`.
    public static let name = "ML-KEM"
    /// `"MLKEMTest"`; `MLKEMEncapsTest` groups are read too (`disposition(of:)`).
    public static let groupType = "MLKEMTest"
    /// The other group type this algorithm reads.
    public static let encapsulationGroupType = "MLKEMEncapsTest"

    /// Runs `MLKEMTest` and `MLKEMEncapsTest` groups of ML-KEM-768; skips the rest.
    /// - Throws: `VectorFailure` when `type` or `parameterSet` is missing.
    public static func disposition(of group: VectorTest) throws -> WycheproofGroupDisposition {
        let type = try group.string("type")
        guard type == groupType || type == encapsulationGroupType else {
            return .skip("ML-KEM group type \(type) is not read (only \(groupType) and \(encapsulationGroupType))")
        }
        let parameterSet = try group.string("parameterSet")
        guard parameterSet == "ML-KEM-768" else { return .skip("\(parameterSet) is not offered (only ML-KEM-768)") }
        return .run
    }

    /// Checks one test of either group type.
    /// - Throws: `VectorFailure` for a missing or non-hex field or a result the test's
    ///   `result` does not allow.
    public static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            return .skipped("ML-KEM-768 needs macOS/iOS 26 on Apple platforms")
        }
        let kem = SwiftCryptoMLKEM768()
        if try group.string("type") == encapsulationGroupType {
            return try runEncapsulation(test, expecting: expectation, kem: kem)
        }
        // Invalid tests may leave out `ek` and `K`: they are read only when they are compared.
        let seed = SecureBytes(copying: try test.hex("seed"))
        let ciphertext = try test.hex("c")
        let outcome: (key: [UInt8], secret: [UInt8])
        do throws(SessionError) {
            let key = try kem.encapsulationKey(fromSeed: seed)
            let secret = try kem.decapsulate(ciphertext, seed: seed)
            outcome = (key.rawRepresentation, secret.bytes)
        } catch {
            if expectation == .valid { throw VectorFailure("refused a valid test (\(error))") }
            return .passed
        }
        switch expectation {
        case .invalid:
            throw VectorFailure("an invalid test was accepted (seed \(seed.count) bytes, c \(ciphertext.count) bytes)")
        case .valid, .acceptable:
            try ExpectedError.equal(outcome.key, try test.hex("ek"), "ek")
            try ExpectedError.equal(outcome.secret, try test.hex("K"), "K")
        }
        return .passed
    }

    private static func runEncapsulation(
        _ test: VectorTest, expecting expectation: WycheproofExpectation, kem: some KeyEncapsulationMechanism
    ) throws -> VectorOutcome {
        let bytes = try test.hex("ek")
        let encapsulation: KEMEncapsulation
        do throws(SessionError) {
            encapsulation = try kem.encapsulate(to: try KEMEncapsulationKey(rawRepresentation: bytes))
        } catch {
            switch expectation {
            case .valid: throw VectorFailure("refused a valid ek (\(error))")
            case .invalid, .acceptable:
                let name = ExpectedError.name(of: error)
                guard name == "invalidKey" else { throw VectorFailure("ek refused with \(name), expected invalidKey") }
                return .passed
            }
        }
        guard expectation != .invalid else { throw VectorFailure("an invalid ek was accepted") }
        guard encapsulation.ciphertext.count == KEMEncapsulation.ciphertextByteCount,
              encapsulation.sharedSecret.count == KEMEncapsulation.sharedSecretByteCount else {
            throw VectorFailure("encapsulation gave \(encapsulation.ciphertext.count) + \(encapsulation.sharedSecret.count) bytes")
        }
        return .passed
    }
}
