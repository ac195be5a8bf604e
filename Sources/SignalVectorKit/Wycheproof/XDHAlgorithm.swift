import SignalPrimitives

/// Wycheproof `XDH` (X25519, `XdhComp` groups): `private`, `public`, `shared`.
///
/// A valid test must compute `shared`. An acceptable test may compute `shared` or be rejected,
/// but never give another value. An invalid test must be rejected. Whatever the `result`, an
/// expected all-zero `shared` must be rejected with `invalidKey` (SPEC §1: DH rejects an
/// all-zero output).
public enum XDHAlgorithm: WycheproofAlgorithm {
    /// `"XDH"`.
    public static let name = "XDH"
    /// `"XdhComp"` (raw 32-byte keys; the ASN.1, PEM and JWK groups are skipped).
    public static let groupType = "XdhComp"

    /// Runs `XdhComp` groups on curve25519 only (a group without `curve` is taken as
    /// curve25519); groups of other types or on other curves (X448) are skipped.
    /// - Throws: `VectorFailure` when the group has no string `type`.
    public static func disposition(of group: VectorTest) throws -> WycheproofGroupDisposition {
        let typeDisposition = try groupTypeDisposition(of: group)
        guard typeDisposition == .run else { return typeDisposition }
        guard let curve = group.fields["curve"] as? String, curve != "curve25519" else { return .run }
        return .skip("XDH curve \(curve) is not offered")
    }

    /// Checks one test.
    /// - Throws: `VectorFailure` when `private`, `public` or `shared` is missing or not hex,
    ///   when a valid test is rejected or computes another value, when an invalid test is
    ///   accepted, when an acceptable test computes another value, or when an expected all-zero
    ///   `shared` is not rejected with `invalidKey`.
    public static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome {
        let privateBytes = try test.hex("private")
        let publicBytes = try test.hex("public")
        let expected = try test.hex("shared")
        let expectsAllZero = !expected.isEmpty && expected.allSatisfy { $0 == 0 }

        let computed: [UInt8]
        do throws(CryptoError) {
            let privateKey = try X25519.PrivateKey(rawRepresentation: privateBytes)
            let publicKey = try X25519.PublicKey(rawRepresentation: publicBytes)
            computed = try privateKey.sharedSecret(with: publicKey).storage.bytes
        } catch {
            if expectsAllZero {
                guard error == .invalidKey else {
                    throw VectorFailure("all-zero shared secret rejected with \(error), expected invalidKey")
                }
                return .passed
            }
            switch expectation {
            case .valid: throw VectorFailure("rejected (\(error)), expected shared \(Hex.encode(expected))")
            case .invalid, .acceptable: return .passed
            }
        }
        if expectsAllZero {
            throw VectorFailure("all-zero shared secret was accepted (SPEC §1: invalidKey)")
        }
        switch expectation {
        case .invalid:
            throw VectorFailure("accepted an invalid input (computed \(Hex.encode(computed)))")
        case .valid, .acceptable:
            try ExpectedError.equal(computed, expected, "shared")
            return .passed
        }
    }
}
