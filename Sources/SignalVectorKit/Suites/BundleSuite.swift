@_spi(Testing) import SessionKit
import SignalPrimitives

/// SPEC §8 suite `bundle` (the §3 encoding). A success test gives the responder's keys
/// (`identity_seed`, `spk_id`, `spk_sk`, optional `opk_id`/`opk_sk`, optional
/// `kem_id`/`kem_seed`, optional `registration_id`, SPEC §9's flag bit 2): the bundle built from them (the signed prekey signed with `kem` = 1
/// exactly when a KEM prekey is given, the encapsulation key generated from `kem_seed`, the
/// signatures deterministic Ed25519) must encode to exactly `bundle`, and `bundle` must decode
/// to the same bundle and pass the initiator's checks. An error test gives `bundle` only: it is
/// decoded and then checked as the initiator does (signatures, then keys), and must fail with
/// `error`.
public enum BundleSuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "bundle"

    /// Runs one test.
    /// - Throws: `VectorFailure` on a mismatch or a malformed test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let encoded = try test.hex("bundle")
        if let expected = test.expectedError {
            try ExpectedError.check(expected) { _ = try X3DH.checkBundle(try PreKeyBundle(serialized: encoded)) }
            return .passed
        }
        let identity = try IdentityKeyPair(seed: test.hex("identity_seed"))
        let kemSeed = try test.optionalHex("kem_seed")
        let signedPreKey = try SignedPreKey(
            id: try test.uint32("spk_id"), privateKey: test.hex("spk_sk"), signedBy: identity, signsKEMPreKeys: kemSeed != nil)
        let oneTimePreKey = try test.optionalHex("opk_sk").map { try OneTimePreKey(id: try test.uint32("opk_id"), privateKey: $0) }
        let kemPreKey = try kemSeed.map {
            try KEMPreKey(id: try test.uint32("kem_id"), kind: .oneTime, seed: $0, signedBy: identity, kem: try VectorKEM.make())
        }
        let bundle = PreKeyBundle(
            identityKey: identity.publicKey, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey, kemPreKey: kemPreKey,
            registrationID: try test.optionalRegistrationID())
        try ExpectedError.equal(bundle.serialized, encoded, "bundle")
        let decoded = try PreKeyBundle(serialized: encoded)
        guard decoded == bundle else { throw VectorFailure("bundle decodes to other fields than it was built from") }
        _ = try X3DH.checkBundle(decoded)
        return .passed
    }
}
