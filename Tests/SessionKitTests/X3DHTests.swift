import SignalPrimitives
import XCTest
@testable import SessionKit

/// SPEC §3: X3DH on both sides.
final class X3DHTests: XCTestCase {
    private let random = SeededRandomSource(seed: 3)

    private func parties(oneTimePreKey: Bool) throws -> (IdentityKeyPair, IdentityKeyPair, SignedPreKey, OneTimePreKey?, X25519.PrivateKey) {
        let alice = try IdentityKeyPair(using: random)
        let bob = try IdentityKeyPair(using: random)
        let spk = try SignedPreKey(id: 1, signedBy: bob, using: random)
        let opk = oneTimePreKey ? try OneTimePreKey(id: 9, using: random) : nil
        return (alice, bob, spk, opk, try X25519.PrivateKey(using: random))
    }

    /// SK recomputed from the primitives as SPEC §3 writes it.
    private func specSharedSecret(
        alice: IdentityKeyPair, bob: IdentityKeyPair, spk: SignedPreKey, opk: OneTimePreKey?, ephemeral: X25519.PrivateKey
    ) throws -> [UInt8] {
        var ikm = [UInt8](repeating: 0xFF, count: 32)
        ikm += try alice.privateKey.convertToX25519().sharedSecret(with: spk.publicKey).storage.bytes
        ikm += try ephemeral.sharedSecret(with: bob.publicKey.convertToX25519()).storage.bytes
        ikm += try ephemeral.sharedSecret(with: spk.publicKey).storage.bytes
        if let opk { ikm += try ephemeral.sharedSecret(with: opk.publicKey).storage.bytes }
        return try HKDF.deriveKey(
            inputKeyMaterial: ikm, salt: [UInt8](repeating: 0, count: 32), info: Array("SessionKit X3DH v1".utf8), outputByteCount: 32)
    }

    func testBothSidesAgreeWithAndWithoutOneTimePreKey() throws {
        for withOPK in [true, false] {
            let (alice, bob, spk, opk, ephemeral) = try parties(oneTimePreKey: withOPK)
            let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: opk)
            let initiator = try X3DH.initiate(identity: alice, bundle: bundle, ephemeralKey: ephemeral)
            let responder = try X3DH.respond(
                identity: bob, signedPreKey: spk, oneTimePreKey: opk,
                initiatorIdentityKey: alice.publicKey, initiatorEphemeralKey: ephemeral.publicKey)
            XCTAssertEqual(initiator.sharedSecret, responder.sharedSecret)
            XCTAssertEqual(initiator.sharedSecret.storage.bytes, try specSharedSecret(alice: alice, bob: bob, spk: spk, opk: opk, ephemeral: ephemeral))
            XCTAssertEqual(initiator.associatedData, alice.publicKey.rawRepresentation + bob.publicKey.rawRepresentation)
            XCTAssertEqual(responder.associatedData, initiator.associatedData)
        }
    }

    func testTheOneTimePreKeyChangesTheSecret() throws {
        let (alice, bob, spk, opk, ephemeral) = try parties(oneTimePreKey: true)
        let with = try X3DH.initiate(identity: alice, bundle: PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: opk), ephemeralKey: ephemeral)
        let without = try X3DH.initiate(identity: alice, bundle: PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: nil), ephemeralKey: ephemeral)
        XCTAssertNotEqual(with.sharedSecret, without.sharedSecret)
    }

    func testForgedSignatureIsRejected() throws {
        let (alice, bob, spk, _, ephemeral) = try parties(oneTimePreKey: false)
        for bad in [flipped(spk.signature, at: 0), flipped(spk.signature, at: 63, bit: 7), [UInt8](repeating: 0, count: 64),
                    Array(spk.signature.prefix(63)), alice.signature(forSignedPreKey: spk.publicKey),
                    bob.privateKey.signature(for: spk.publicKey.rawRepresentation)] {
            let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: spk.publicKey, signedPreKeySignature: bad, oneTimePreKey: nil)
            XCTAssertThrowsError(try X3DH.initiate(identity: alice, bundle: bundle, ephemeralKey: ephemeral)) {
                XCTAssertEqual($0 as? SessionError, .invalidSignature)
            }
        }
    }

    /// The signature is checked before any conversion or DH: with keys that would fail
    /// the conversion (IK_B of small order) or give an all-zero DH (SPK = 0), an unsigned
    /// bundle is still reported as `invalidSignature`.
    func testSignatureIsCheckedBeforeAnyConversionOrDH() throws {
        let (alice, bob, spk, _, ephemeral) = try parties(oneTimePreKey: false)
        let smallOrderIdentity = try Ed25519.PublicKey(rawRepresentation: [1] + [UInt8](repeating: 0, count: 31))
        let zeroKey = try X25519.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 32))
        let badIdentity = PreKeyBundle(identityKey: smallOrderIdentity, signedPreKeyID: 1, signedPreKey: spk.publicKey, signedPreKeySignature: spk.signature, oneTimePreKey: nil)
        let zeroPreKey = PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: zeroKey, signedPreKeySignature: spk.signature, oneTimePreKey: nil)
        for bundle in [badIdentity, zeroPreKey] {
            XCTAssertThrowsError(try X3DH.initiate(identity: alice, bundle: bundle, ephemeralKey: ephemeral)) {
                XCTAssertEqual($0 as? SessionError, .invalidSignature)
            }
        }
        // Correctly signed, the all-zero signed prekey then fails as a key.
        let signedZero = PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: zeroKey,
                                      signedPreKeySignature: bob.signature(forSignedPreKey: zeroKey), oneTimePreKey: nil)
        XCTAssertThrowsError(try X3DH.initiate(identity: alice, bundle: signedZero, ephemeralKey: ephemeral)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
    }

    func testNonCanonicalBundleKeysAreInvalidKey() throws {
        let (alice, bob, spk, _, ephemeral) = try parties(oneTimePreKey: false)
        var high = spk.publicKey.rawRepresentation
        high[31] |= 0x80
        let nonCanonical = try X25519.PublicKey(rawRepresentation: high)
        let signed = PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: nonCanonical,
                                  signedPreKeySignature: bob.signature(forSignedPreKey: nonCanonical), oneTimePreKey: nil)
        XCTAssertThrowsError(try X3DH.initiate(identity: alice, bundle: signed, ephemeralKey: ephemeral)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
        let badOPK = PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: spk.publicKey, signedPreKeySignature: spk.signature,
                                  oneTimePreKey: .init(id: 3, publicKey: nonCanonical))
        XCTAssertThrowsError(try X3DH.initiate(identity: alice, bundle: badOPK, ephemeralKey: ephemeral)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
    }

    func testResponderRejectsAnInitiatorIdentityThatIsNotAValidPoint() throws {
        let (_, bob, spk, _, ephemeral) = try parties(oneTimePreKey: false)
        let smallOrder = try Ed25519.PublicKey(rawRepresentation: [1] + [UInt8](repeating: 0, count: 31))
        XCTAssertThrowsError(try X3DH.respond(identity: bob, signedPreKey: spk, oneTimePreKey: nil,
                                              initiatorIdentityKey: smallOrder, initiatorEphemeralKey: ephemeral.publicKey)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
    }

    func testOneTimePreKeyIsUsedOnce() throws {
        var conversation = try Conversation(seed: 11)
        let first = try conversation.aliceSends(plaintext(0))
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(0))
        XCTAssertTrue(conversation.bobPreKeys.oneTimePreKeys.isEmpty, "the consumed one-time prekey is reported and deleted")

        // A second initiator (a new EK_A) naming the same one-time prekey.
        let bundle = PreKeyBundle(identityKey: conversation.bobIdentity.publicKey, signedPreKey: conversation.signedPreKey,
                                  oneTimePreKey: conversation.oneTimePreKey)
        var second = try SessionState(initiatingWith: bundle, identity: conversation.aliceIdentity, random: SeededRandomSource(seed: 99))
        let replayedOPK = try second.encrypt(plaintext(1))
        assertFails(.unknownPreKey, &conversation) { _ = try $0.bobReceives(replayedOPK) }
    }

    func testSignedPreKeySignatureVerifies() throws {
        let (alice, bob, spk, _, _) = try parties(oneTimePreKey: false)
        XCTAssertTrue(spk.hasValidSignature(from: bob.publicKey))
        XCTAssertFalse(spk.hasValidSignature(from: alice.publicKey))
        XCTAssertTrue(bob.publicKey.isValidSignature(spk.signature, for: [0x05] + spk.publicKey.rawRepresentation))
    }

    func testSecretsAreRedactedInDescriptions() throws {
        let (alice, bob, spk, opk, ephemeral) = try parties(oneTimePreKey: true)
        let agreement = try X3DH.initiate(identity: alice, bundle: PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: opk), ephemeralKey: ephemeral)
        let secretHexes = [Hex.encode(alice.privateKey.seedRepresentation), Hex.encode(spk.privateKey.rawRepresentation),
                           Hex.encode(agreement.sharedSecret.storage.bytes)]
        for text in ["\(alice)", "\(spk)", "\(opk.map { "\($0)" } ?? "")", "\(agreement)", String(reflecting: agreement)] {
            for secret in secretHexes { XCTAssertFalse(text.contains(secret)) }
        }
    }

    /// The identity's X25519 form is derived once, at creation, and is SPEC §1's ed→x private
    /// conversion of the seed whichever way the identity was made.
    func testIdentityAgreementKeyIsTheSeedConversion() throws {
        let seed = random.bytes(32)
        let identities = [
            try IdentityKeyPair(seed: seed),
            IdentityKeyPair(privateKey: try Ed25519.PrivateKey(seed: seed)),
        ]
        let expected = try Ed25519.PrivateKey(seed: seed).convertToX25519()
        for identity in identities + [try IdentityKeyPair(using: random)] {
            XCTAssertEqual(identity.agreementKey.rawRepresentation, identity.privateKey.convertToX25519().rawRepresentation)
            XCTAssertEqual(identity.agreementKey.publicKey, try identity.publicKey.convertToX25519())
        }
        XCTAssertEqual(identities[0].agreementKey.rawRepresentation, expected.rawRepresentation)
    }
}
