@_spi(Testing) import SessionKit
import SignalPrimitives

/// SPEC §8 suite `x3dh` (§3, with an optional KEM prekey). Bob's bundle is built from the
/// test's keys with the given signatures as they are (`kem` = 1 exactly when the four KEM
/// fields are given). Alice checks it, takes `kem_encapsulation` as the result of Encaps, puts
/// the optional `registration_id` (hers, SPEC §9) in P, and must give `prefix` (P),
/// `shared_secret` and `associated_data`; Bob decapsulates the
/// ciphertext with his KEM seed (which must give the encapsulation's secret) and must give
/// the same secret and AD from P. Error tests expect the initiator's bundle checks to fail.
public enum X3DHSuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "x3dh"

    /// Runs one test.
    /// - Throws: `VectorFailure` when the library disagrees with the test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let alice = try IdentityKeyPair(seed: test.hex("alice_identity_seed"))
        let aliceAddress = try test.address("alice_address")
        let ephemeralKey = try X25519.PrivateKey(rawRepresentation: test.hex("alice_ephemeral_sk"))
        let bob = try IdentityKeyPair(seed: test.hex("bob_identity_seed"))
        let bobAddress = try test.address("bob_address")
        let signedPreKeyID = try test.uint32("bob_spk_id")
        let signedPreKeySecret = try test.hex("bob_spk_sk")
        let signedPreKeyPrivate = try X25519.PrivateKey(rawRepresentation: signedPreKeySecret)
        let oneTimePreKey = try test.optionalHex("bob_opk_sk").map { try OneTimePreKey(id: try test.uint32("bob_opk_id"), privateKey: $0) }
        let kemSeed = try test.optionalHex("bob_kem_seed")
        let encapsulation = try test.optionalEncapsulation("kem_encapsulation")
        var kemKey: PreKeyBundle.KEMKey?
        if let kemSeed {
            let publicKey = try VectorKEM.make().encapsulationKey(fromSeed: SecureBytes(copying: kemSeed))
            kemKey = try PreKeyBundle.KEMKey(
                id: try test.uint32("bob_kem_id"), publicKey: publicKey.rawRepresentation, signature: test.hex("bob_kem_signature"))
        }
        guard (kemSeed == nil) == (encapsulation == nil) else {
            throw VectorFailure("bob_kem_seed and kem_encapsulation must be given together")
        }
        let signature = try test.hex("bob_spk_signature")
        let registrationID = try test.optionalRegistrationID()

        func initiate() throws -> (PreKeyMessage.Prefix, X3DHAgreement) {
            let bundle = try PreKeyBundle(
                identityKey: bob.publicKey, signedPreKeyID: signedPreKeyID, signedPreKey: signedPreKeyPrivate.publicKey,
                signedPreKeySignature: signature,
                oneTimePreKey: oneTimePreKey.map { PreKeyBundle.OneTimeKey(id: $0.id, publicKey: $0.publicKey) }, kemPreKey: kemKey)
            _ = try X3DH.checkBundle(bundle)
            let kemPart = try both(kemKey, encapsulation).map { (key, encapsulation) throws(SessionError) in
                try PreKeyMessage.Prefix.KEMPart(preKeyID: key.id, ciphertext: encapsulation.ciphertext)
            }
            let prefix = PreKeyMessage.Prefix(
                identityKey: alice.publicKey, baseKey: ephemeralKey.publicKey, signedPreKeyID: signedPreKeyID,
                oneTimePreKeyID: oneTimePreKey?.id, kem: kemPart, registrationID: registrationID)
            let agreement = try X3DH.initiate(
                identity: alice, localAddress: aliceAddress, remoteAddress: bobAddress, bundle: bundle, ephemeralKey: ephemeralKey,
                prefix: prefix, kemSharedSecret: encapsulation?.sharedSecret)
            return (prefix, agreement)
        }

        if let expected = test.expectedError {
            try ExpectedError.check(expected) { _ = try initiate() }
            return .passed
        }
        let expectedSecret = try test.hex("shared_secret")
        let expectedAD = try test.hex("associated_data")
        let (prefix, initiator) = try initiate()
        try ExpectedError.equal(prefix.bytes, try test.hex("prefix"), "prefix")
        try ExpectedError.equal(initiator.sharedSecret.storage.bytes, expectedSecret, "initiator shared_secret")
        try ExpectedError.equal(initiator.associatedData, expectedAD, "initiator associated_data")

        var decapsulated: SecureBytes?
        if let kemSeed, let part = prefix.kem, let encapsulation {
            let secret = try VectorKEM.make().decapsulate(part.ciphertext, seed: SecureBytes(copying: kemSeed))
            try ExpectedError.equal(secret.bytes, encapsulation.sharedSecret.bytes, "decapsulated KEM shared_secret")
            decapsulated = secret
        }
        let signedPreKey = try SignedPreKey(
            id: signedPreKeyID, privateKey: signedPreKeySecret, signature: signature, signsKEMPreKeys: kemSeed != nil)
        let responder = try X3DH.respond(
            identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress, prefix: prefix, signedPreKey: signedPreKey,
            oneTimePreKey: oneTimePreKey, kemSharedSecret: decapsulated)
        try ExpectedError.equal(responder.sharedSecret.storage.bytes, expectedSecret, "responder shared_secret")
        try ExpectedError.equal(responder.associatedData, expectedAD, "responder associated_data")
        return .passed
    }
}

/// Both optionals, or nil.
private func both<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
