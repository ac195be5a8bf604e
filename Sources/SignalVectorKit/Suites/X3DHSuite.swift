import SessionKit
import SignalPrimitives

/// The `x3dh` suite (SPEC §3, §8): both the initiator's and the responder's computation must
/// give `shared_secret` and `associated_data`; error tests expect the initiator to reject
/// the bundle (its signature is checked first).
public enum X3DHSuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "x3dh"

    /// Runs one test.
    /// - Throws: `VectorFailure` when the library disagrees with the test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let alice = try IdentityKeyPair(seed: test.hex("alice_identity_seed"))
        let ephemeralKey = try X25519.PrivateKey(rawRepresentation: test.hex("alice_ephemeral_sk"))
        let bob = try IdentityKeyPair(seed: test.hex("bob_identity_seed"))
        let signedPreKeySecret = try test.hex("bob_spk_sk")
        let signature = try test.hex("bob_spk_signature")
        let signedPreKeyPrivate = try X25519.PrivateKey(rawRepresentation: signedPreKeySecret)
        let oneTimePreKey = try test.optionalHex("bob_opk_sk").map { try OneTimePreKey(id: 2, privateKey: $0) }
        let bundle = PreKeyBundle(
            identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: signedPreKeyPrivate.publicKey,
            signedPreKeySignature: signature,
            oneTimePreKey: oneTimePreKey.map { PreKeyBundle.OneTimeKey(id: $0.id, publicKey: $0.publicKey) })

        if let expected = test.expectedError {
            try ExpectedError.check(expected) {
                _ = try X3DH.initiate(identity: alice, bundle: bundle, ephemeralKey: ephemeralKey)
            }
            return .passed
        }
        let expectedSecret = try test.hex("shared_secret")
        let expectedAD = try test.hex("associated_data")

        let initiator = try X3DH.initiate(identity: alice, bundle: bundle, ephemeralKey: ephemeralKey)
        try ExpectedError.equal(initiator.sharedSecret.storage.bytes, expectedSecret, "initiator shared_secret")
        try ExpectedError.equal(initiator.associatedData, expectedAD, "initiator associated_data")

        let signedPreKey = try SignedPreKey(id: 1, privateKey: signedPreKeySecret, signature: signature)
        let responder = try X3DH.respond(
            identity: bob, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey,
            initiatorIdentityKey: alice.publicKey, initiatorEphemeralKey: ephemeralKey.publicKey)
        try ExpectedError.equal(responder.sharedSecret.storage.bytes, expectedSecret, "responder shared_secret")
        try ExpectedError.equal(responder.associatedData, expectedAD, "responder associated_data")
        return .passed
    }
}
