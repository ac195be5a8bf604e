import SignalPrimitives

/// Wycheproof `EDDSA` (Ed25519 verification, `EddsaVerify` groups): the group's public key
/// (`publicKey.pk`, or `key.pk` in older files), and per test `msg` and `sig`.
///
/// A valid test must verify and an invalid one must not, under libsodium's strict
/// verification; an acceptable test may do either.
public enum EdDSAAlgorithm: WycheproofAlgorithm {
    /// `"EDDSA"`.
    public static let name = "EDDSA"
    /// `"EddsaVerify"`.
    public static let groupType = "EddsaVerify"

    /// Runs `EddsaVerify` groups on edwards25519 only; groups of other types or on other curves
    /// (Ed448) are skipped.
    /// - Throws: `VectorFailure` when the group has no `type`, or when an `EddsaVerify` group
    ///   has no `publicKey` (or `key`) object with a hex `pk`.
    public static func disposition(of group: VectorTest) throws -> WycheproofGroupDisposition {
        let typeDisposition = try groupTypeDisposition(of: group)
        guard typeDisposition == .run else { return typeDisposition }
        let key = try publicKeyObject(of: group)
        _ = try key.hex("pk")
        if let curve = key.fields["curve"] as? String, curve != "edwards25519" {
            return .skip("EdDSA curve \(curve) is not offered")
        }
        return .run
    }

    /// Checks one test.
    /// - Throws: `VectorFailure` when the group's key or the test's `msg` or `sig` is missing or
    ///   not hex, when a valid signature does not verify, or when an invalid one verifies.
    public static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome {
        let keyBytes = try publicKeyObject(of: group).hex("pk")
        let message = try test.hex("msg")
        let signature = try test.hex("sig")
        let verified: Bool
        do {
            verified = try Ed25519.PublicKey(rawRepresentation: keyBytes).isValidSignature(signature, for: message)
        } catch {
            verified = false
        }
        switch (expectation, verified) {
        case (.valid, false): throw VectorFailure("a valid signature did not verify")
        case (.invalid, true): throw VectorFailure("an invalid signature verified")
        default: return .passed
        }
    }

    private static func publicKeyObject(of group: VectorTest) throws -> VectorTest {
        if group.has("publicKey") { return try group.object("publicKey") }
        if group.has("key") { return try group.object("key") }
        throw VectorFailure("test group without 'publicKey'")
    }
}
