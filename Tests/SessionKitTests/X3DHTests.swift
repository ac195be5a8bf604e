import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// SPEC §3: X3DH on both sides.
final class X3DHTests: XCTestCase {
    private let random = SeededRandomSource(seed: 3)
    private let aliceAddress = address("alice", 1)
    private let bobAddress = address("bob", 2)

    private func parties(oneTimePreKey: Bool) throws -> (IdentityKeyPair, IdentityKeyPair, SignedPreKey, OneTimePreKey?, X25519.PrivateKey) {
        let alice = try IdentityKeyPair(using: random)
        let bob = try IdentityKeyPair(using: random)
        let spk = try SignedPreKey(id: 1, signedBy: bob, using: random)
        let opk = oneTimePreKey ? try OneTimePreKey(id: 9, using: random) : nil
        return (alice, bob, spk, opk, try X25519.PrivateKey(using: random))
    }

    /// P = `IK_A || EK_A || u32(spk_id) || flags || [u32(opk_id)] || [u32(kem_id) || CT]`,
    /// assembled by hand.
    private func specPrefix(alice: IdentityKeyPair, ephemeral: X25519.PrivateKey, spkID: UInt32, opkID: UInt32?,
                            kem: (id: UInt32, ciphertext: [UInt8])? = nil) -> [UInt8] {
        var p = alice.publicKey.rawRepresentation + ephemeral.publicKey.rawRepresentation + u32(spkID)
        p.append((opkID == nil ? 0 : 1) | (kem == nil ? 0 : 2))
        if let opkID { p += u32(opkID) }
        if let kem { p += u32(kem.id) + kem.ciphertext }
        return p
    }

    /// SK recomputed from the primitives as SPEC §3 writes it.
    private func specSharedSecret(
        alice: IdentityKeyPair, bob: IdentityKeyPair, spk: SignedPreKey, opk: OneTimePreKey?, ephemeral: X25519.PrivateKey,
        prefix: [UInt8], kemSecret: [UInt8]? = nil
    ) throws -> [UInt8] {
        var ikm = [UInt8](repeating: 0xFF, count: 32)
        ikm += try alice.privateKey.convertToX25519().sharedSecret(with: spk.publicKey).storage.bytes
        ikm += try ephemeral.sharedSecret(with: bob.publicKey.convertToX25519()).storage.bytes
        ikm += try ephemeral.sharedSecret(with: spk.publicKey).storage.bytes
        if let opk { ikm += try ephemeral.sharedSecret(with: opk.publicKey).storage.bytes }
        if let kemSecret { ikm += kemSecret }
        let label = kemSecret == nil ? "SessionKit X3DH v2" : "SessionKit PQXDH v2"
        return try HKDF.deriveKey(
            inputKeyMaterial: ikm, salt: [UInt8](repeating: 0, count: 32), info: Array(label.utf8) + SHA256.hash(prefix),
            outputByteCount: 32)
    }

    private func prefix(alice: IdentityKeyPair, ephemeral: X25519.PrivateKey, bundle: PreKeyBundle,
                        kem: PreKeyMessage.Prefix.KEMPart? = nil) -> PreKeyMessage.Prefix {
        PreKeyMessage.Prefix(identityKey: alice.publicKey, baseKey: ephemeral.publicKey, signedPreKeyID: bundle.signedPreKeyID,
                             oneTimePreKeyID: bundle.oneTimePreKey?.id, kem: kem)
    }

    /// A bundle with the given parts and a signature of 64 bytes (the memberwise init refuses others).
    private func bundle(_ identity: Ed25519.PublicKey, _ spk: X25519.PublicKey, signature: [UInt8],
                        oneTimePreKey: PreKeyBundle.OneTimeKey? = nil) throws -> PreKeyBundle {
        try PreKeyBundle(identityKey: identity, signedPreKeyID: 1, signedPreKey: spk, signedPreKeySignature: signature,
                         oneTimePreKey: oneTimePreKey)
    }

    func testBothSidesAgreeWithAndWithoutOneTimePreKey() throws {
        for withOPK in [true, false] {
            let (alice, bob, spk, opk, ephemeral) = try parties(oneTimePreKey: withOPK)
            let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: opk)
            XCTAssertNil(try X3DH.checkBundle(bundle))
            let p = prefix(alice: alice, ephemeral: ephemeral, bundle: bundle)
            XCTAssertEqual(p.bytes, specPrefix(alice: alice, ephemeral: ephemeral, spkID: 1, opkID: withOPK ? 9 : nil))
            let initiator = try X3DH.initiate(
                identity: alice, localAddress: aliceAddress, remoteAddress: bobAddress, bundle: bundle, ephemeralKey: ephemeral,
                prefix: p, kemSharedSecret: nil)
            let responder = try X3DH.respond(
                identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress, prefix: p, signedPreKey: spk,
                oneTimePreKey: opk, kemSharedSecret: nil)
            XCTAssertEqual(initiator.sharedSecret, responder.sharedSecret)
            XCTAssertEqual(initiator.sharedSecret.storage.bytes, try specSharedSecret(
                alice: alice, bob: bob, spk: spk, opk: opk, ephemeral: ephemeral,
                prefix: specPrefix(alice: alice, ephemeral: ephemeral, spkID: 1, opkID: withOPK ? 9 : nil)))
            // AD = IK_A || IK_B || Encode(A) || Encode(B), initiator first.
            XCTAssertEqual(initiator.associatedData, alice.publicKey.rawRepresentation + bob.publicKey.rawRepresentation
                + encodeAddress("alice", 1) + encodeAddress("bob", 2))
            XCTAssertEqual(responder.associatedData, initiator.associatedData)
        }
    }

    /// SPEC §3 binds both addresses: a responder that believes the message came from another
    /// address (or is itself another address) computes another AD, so nothing authenticates.
    func testTheAddressesChangeTheAssociatedDataButNotTheSecret() throws {
        let (alice, bob, spk, opk, ephemeral) = try parties(oneTimePreKey: true)
        let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: opk)
        let p = prefix(alice: alice, ephemeral: ephemeral, bundle: bundle)
        let genuine = try X3DH.respond(identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress, prefix: p,
                                       signedPreKey: spk, oneTimePreKey: opk, kemSharedSecret: nil)
        for (local, remote) in [(bobAddress, address("mallory", 1)), (bobAddress, address("alice", 2)), (address("bob", 3), aliceAddress)] {
            let other = try X3DH.respond(identity: bob, localAddress: local, remoteAddress: remote, prefix: p, signedPreKey: spk,
                                         oneTimePreKey: opk, kemSharedSecret: nil)
            XCTAssertNotEqual(other.associatedData, genuine.associatedData, "\(local) ← \(remote)")
            XCTAssertEqual(other.sharedSecret, genuine.sharedSecret)
        }
    }

    func testTheOneTimePreKeyChangesTheSecret() throws {
        let (alice, bob, spk, opk, ephemeral) = try parties(oneTimePreKey: true)
        let withBundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: opk)
        let withoutBundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: nil)
        let with = try X3DH.initiate(identity: alice, localAddress: aliceAddress, remoteAddress: bobAddress, bundle: withBundle,
                                     ephemeralKey: ephemeral, prefix: prefix(alice: alice, ephemeral: ephemeral, bundle: withBundle),
                                     kemSharedSecret: nil)
        let without = try X3DH.initiate(identity: alice, localAddress: aliceAddress, remoteAddress: bobAddress, bundle: withoutBundle,
                                        ephemeralKey: ephemeral, prefix: prefix(alice: alice, ephemeral: ephemeral, bundle: withoutBundle),
                                        kemSharedSecret: nil)
        XCTAssertNotEqual(with.sharedSecret, without.sharedSecret)
    }

    /// P is hashed into SK: the same keys with a prefix that differs in any field (here the
    /// signed prekey id, which no DH depends on) give another secret.
    func testThePrefixIsBoundIntoTheSecret() throws {
        let (alice, bob, spk, _, ephemeral) = try parties(oneTimePreKey: false)
        let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: nil)
        let genuine = prefix(alice: alice, ephemeral: ephemeral, bundle: bundle)
        let relabeled = PreKeyMessage.Prefix(identityKey: alice.publicKey, baseKey: ephemeral.publicKey, signedPreKeyID: 2,
                                             oneTimePreKeyID: nil, kem: nil)
        let first = try X3DH.respond(identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress, prefix: genuine,
                                     signedPreKey: spk, oneTimePreKey: nil, kemSharedSecret: nil)
        let second = try X3DH.respond(identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress, prefix: relabeled,
                                      signedPreKey: spk, oneTimePreKey: nil, kemSharedSecret: nil)
        XCTAssertNotEqual(first.sharedSecret, second.sharedSecret)
    }

    func testForgedSignatureIsRejected() throws {
        let (alice, bob, spk, _, _) = try parties(oneTimePreKey: false)
        let signedWithKEMBit = bob.privateKey.signature(for: SignedPreKey.signedBytes(publicKey: spk.publicKey, signsKEMPreKeys: true))
        for bad in [flipped(spk.signature, at: 0), flipped(spk.signature, at: 63, bit: 7), [UInt8](repeating: 0, count: 64),
                    alice.privateKey.signature(for: SignedPreKey.signedBytes(publicKey: spk.publicKey, signsKEMPreKeys: false)),
                    bob.privateKey.signature(for: spk.publicKey.rawRepresentation),
                    // The v1 label, and the kem bit of a bundle that carries no KEM prekey.
                    bob.privateKey.signature(for: Array("SessionKit SPK v1".utf8) + spk.publicKey.signalEncoding),
                    signedWithKEMBit] {
            let forged = try bundle(bob.publicKey, spk.publicKey, signature: bad)
            XCTAssertThrowsError(try X3DH.checkBundle(forged)) { XCTAssertEqual($0 as? SessionError, .invalidSignature) }
            XCTAssertThrowsError(try SessionState(initiatingWith: forged, identity: alice, localAddress: aliceAddress,
                                                  remoteAddress: bobAddress, kem: nil, random: random)) {
                XCTAssertEqual($0 as? SessionError, .invalidSignature)
            }
        }
        // A signature that is not 64 bytes cannot even make a bundle.
        XCTAssertThrowsError(try bundle(bob.publicKey, spk.publicKey, signature: Array(spk.signature.prefix(63)))) {
            XCTAssertEqual($0 as? SessionError, .invalidSignature)
        }
    }

    /// The signature is checked before any conversion or DH: with keys that would fail
    /// the conversion (IK_B of small order) or give an all-zero DH (SPK = 0), an unsigned
    /// bundle is still reported as `invalidSignature`.
    func testSignatureIsCheckedBeforeAnyConversionOrDH() throws {
        let (alice, bob, spk, _, _) = try parties(oneTimePreKey: false)
        let smallOrderIdentity = try Ed25519.PublicKey(rawRepresentation: [1] + [UInt8](repeating: 0, count: 31))
        let zeroKey = try X25519.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 32))
        let badIdentity = try bundle(smallOrderIdentity, spk.publicKey, signature: spk.signature)
        let zeroPreKey = try bundle(bob.publicKey, zeroKey, signature: spk.signature)
        for bundle in [badIdentity, zeroPreKey] {
            XCTAssertThrowsError(try SessionState(initiatingWith: bundle, identity: alice, localAddress: aliceAddress,
                                                  remoteAddress: bobAddress, kem: nil, random: random)) {
                XCTAssertEqual($0 as? SessionError, .invalidSignature)
            }
        }
        // Correctly signed, the all-zero signed prekey then fails as a key.
        let signedZero = try bundle(bob.publicKey, zeroKey,
                                    signature: bob.privateKey.signature(for: SignedPreKey.signedBytes(publicKey: zeroKey, signsKEMPreKeys: false)))
        XCTAssertThrowsError(try SessionState(initiatingWith: signedZero, identity: alice, localAddress: aliceAddress,
                                              remoteAddress: bobAddress, kem: nil, random: random)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
    }

    func testNonCanonicalBundleKeysAreInvalidKey() throws {
        let (alice, bob, spk, _, _) = try parties(oneTimePreKey: false)
        var high = spk.publicKey.rawRepresentation
        high[31] |= 0x80
        let nonCanonical = try X25519.PublicKey(rawRepresentation: high)
        let signed = try bundle(bob.publicKey, nonCanonical,
                                signature: bob.privateKey.signature(for: SignedPreKey.signedBytes(publicKey: nonCanonical, signsKEMPreKeys: false)))
        let badOPK = try bundle(bob.publicKey, spk.publicKey, signature: spk.signature, oneTimePreKey: .init(id: 3, publicKey: nonCanonical))
        for bundle in [signed, badOPK] {
            XCTAssertThrowsError(try X3DH.checkBundle(bundle)) { XCTAssertEqual($0 as? SessionError, .invalidKey) }
            XCTAssertThrowsError(try SessionState(initiatingWith: bundle, identity: alice, localAddress: aliceAddress,
                                                  remoteAddress: bobAddress, kem: nil, random: random)) {
                XCTAssertEqual($0 as? SessionError, .invalidKey)
            }
        }
    }

    func testResponderRejectsAnInitiatorIdentityThatIsNotAValidPoint() throws {
        let (_, bob, spk, _, ephemeral) = try parties(oneTimePreKey: false)
        let smallOrder = try Ed25519.PublicKey(rawRepresentation: [1] + [UInt8](repeating: 0, count: 31))
        let p = PreKeyMessage.Prefix(identityKey: smallOrder, baseKey: ephemeral.publicKey, signedPreKeyID: 1, oneTimePreKeyID: nil, kem: nil)
        XCTAssertThrowsError(try X3DH.respond(identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress, prefix: p,
                                              signedPreKey: spk, oneTimePreKey: nil, kemSharedSecret: nil)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
    }

    func testOneTimePreKeyIsUsedOnce() throws {
        var conversation = try Conversation(seed: 11)
        let first = try conversation.aliceSends(plaintext(0))
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(0))
        XCTAssertTrue(conversation.bobPreKeys.oneTimePreKeys.isEmpty, "the consumed one-time prekey is reported and deleted")

        // A second initiator (a new EK_A) naming the same one-time prekey.
        var second = try SessionState(initiatingWith: conversation.bundle, identity: conversation.aliceIdentity,
                                      localAddress: conversation.aliceAddress, remoteAddress: conversation.bobAddress, kem: nil,
                                      random: SeededRandomSource(seed: 99))
        let replayedOPK = try second.encrypt(plaintext(1))
        assertFails(.unknownPreKey, &conversation) { _ = try $0.bobReceives(replayedOPK) }
    }

    func testSignedPreKeySignatureVerifies() throws {
        let (alice, bob, spk, _, _) = try parties(oneTimePreKey: false)
        XCTAssertTrue(spk.hasValidSignature(from: bob.publicKey))
        XCTAssertFalse(spk.hasValidSignature(from: alice.publicKey))
        // "SessionKit SPK v2" || 0x05 || SPK || u8(kem), written out by hand.
        XCTAssertTrue(bob.publicKey.isValidSignature(
            spk.signature, for: Array("SessionKit SPK v2".utf8) + [0x05] + spk.publicKey.rawRepresentation + [0x00]))
        XCTAssertFalse(bob.publicKey.isValidSignature(
            spk.signature, for: Array("SessionKit SPK v2".utf8) + [0x05] + spk.publicKey.rawRepresentation + [0x01]))
        let withKEM = try SignedPreKey(id: 2, signedBy: bob, signsKEMPreKeys: true, using: random)
        XCTAssertTrue(withKEM.hasValidSignature(from: bob.publicKey))
        XCTAssertTrue(bob.publicKey.isValidSignature(
            withKEM.signature, for: Array("SessionKit SPK v2".utf8) + [0x05] + withKEM.publicKey.rawRepresentation + [0x01]))
    }

    func testSecretsAreRedactedInDescriptions() throws {
        let (alice, bob, spk, opk, ephemeral) = try parties(oneTimePreKey: true)
        let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: opk)
        let agreement = try X3DH.initiate(identity: alice, localAddress: aliceAddress, remoteAddress: bobAddress, bundle: bundle,
                                          ephemeralKey: ephemeral, prefix: prefix(alice: alice, ephemeral: ephemeral, bundle: bundle),
                                          kemSharedSecret: nil)
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

    // MARK: KEM prekeys (PQXDH)

    /// With a KEM prekey: SK appends SS and uses the PQXDH label; P carries kem_id and CT; the
    /// responder decapsulates to the same secret.
    func testAHybridAgreementAppendsTheKEMSecretAndBothSidesAgree() throws {
        let kem = try mlkem()
        let (alice, bob, _, opk, ephemeral) = try parties(oneTimePreKey: true)
        let spk = try SignedPreKey(id: 1, signedBy: bob, signsKEMPreKeys: true, using: random)
        let kemKey = try KEMPreKey(id: 5, kind: .oneTime, signedBy: bob, kem: kem, using: random)
        let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: opk, kemPreKey: kemKey)
        XCTAssertTrue(bundle.signsKEMPreKeys)
        XCTAssertEqual(try X3DH.checkBundle(bundle), kemKey.publicKey)
        // kem_sig = Ed25519.sign(IK_B, "SessionKit KEM v2" || 0x0B || ek), written out by hand.
        XCTAssertTrue(bob.publicKey.isValidSignature(kemKey.signature, for: Array("SessionKit KEM v2".utf8) + [0x0B] + kemKey.publicKey.rawRepresentation))

        let encapsulation = try kem.encapsulate(to: kemKey.publicKey)
        let part = try PreKeyMessage.Prefix.KEMPart(preKeyID: 5, ciphertext: encapsulation.ciphertext)
        let p = prefix(alice: alice, ephemeral: ephemeral, bundle: bundle, kem: part)
        XCTAssertEqual(p.bytes, specPrefix(alice: alice, ephemeral: ephemeral, spkID: 1, opkID: 9, kem: (5, encapsulation.ciphertext)))
        XCTAssertEqual(p.bytes.count, 69 + 4 + 1092)
        let initiator = try X3DH.initiate(identity: alice, localAddress: aliceAddress, remoteAddress: bobAddress, bundle: bundle,
                                          ephemeralKey: ephemeral, prefix: p, kemSharedSecret: encapsulation.sharedSecret)
        let decapsulated = try kemKey.withUnsafeSeedBytes { try kem.decapsulate(encapsulation.ciphertext, seed: SecureBytes(copying: $0)) }
        let responder = try X3DH.respond(identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress, prefix: p,
                                         signedPreKey: spk, oneTimePreKey: opk, kemSharedSecret: decapsulated)
        XCTAssertEqual(initiator.sharedSecret, responder.sharedSecret)
        XCTAssertEqual(initiator.sharedSecret.storage.bytes, try specSharedSecret(
            alice: alice, bob: bob, spk: spk, opk: opk, ephemeral: ephemeral, prefix: p.bytes,
            kemSecret: encapsulation.sharedSecret.bytes))
        // A prefix with a KEM part needs the KEM secret, and one without must not get one.
        XCTAssertThrowsError(try X3DH.respond(identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress, prefix: p,
                                              signedPreKey: spk, oneTimePreKey: opk, kemSharedSecret: nil)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
    }

    /// The KEM prekey cannot be stripped or swapped: spk_sig covers the kem bit and kem_sig
    /// the encapsulation key; a malformed ek is `invalidKey`, after both signatures.
    func testABundleWhoseKEMPrekeyWasStrippedSwappedOrMalformedIsRefused() throws {
        let kem = try mlkem()
        let (alice, bob, _, _, _) = try parties(oneTimePreKey: false)
        let spk = try SignedPreKey(id: 1, signedBy: bob, signsKEMPreKeys: true, using: random)
        let kemKey = try KEMPreKey(id: 5, kind: .lastResort, signedBy: bob, kem: kem, using: random)
        let genuine = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: nil, kemPreKey: kemKey)
        func check(_ bundle: PreKeyBundle, _ expected: SessionError, _ why: String) {
            XCTAssertThrowsError(try X3DH.checkBundle(bundle), why) { XCTAssertEqual($0 as? SessionError, expected, why) }
            XCTAssertThrowsError(try SessionState(initiatingWith: bundle, identity: alice, localAddress: aliceAddress,
                                                  remoteAddress: bobAddress, kem: kem, random: random), why) {
                XCTAssertEqual($0 as? SessionError, expected, why)
            }
        }
        let stripped = try PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: spk.publicKey,
                                        signedPreKeySignature: spk.signature, oneTimePreKey: nil, kemPreKey: nil)
        check(stripped, .invalidSignature, "stripped KEM prekey (spk_sig signed kem = 1)")
        let stranger = try IdentityKeyPair(using: random)
        let foreign = try KEMPreKey(id: 5, kind: .oneTime, signedBy: stranger, kem: kem, using: random)
        let swapped = try PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: spk.publicKey,
                                       signedPreKeySignature: spk.signature, oneTimePreKey: nil, kemPreKey: PreKeyBundle.KEMKey(foreign))
        check(swapped, .invalidSignature, "a KEM prekey signed by another identity")
        // q in the first coefficient: not a valid ek, but correctly signed.
        var malformed = kemKey.publicKey.rawRepresentation
        malformed[0] = 0x01
        malformed[1] = (malformed[1] & 0xF0) | 0x0D
        let signedMalformed = try PreKeyBundle.KEMKey(
            id: 5, publicKey: malformed, signature: bob.privateKey.signature(for: KEMPreKey.signedBytes(publicKey: malformed)))
        let malformedBundle = try PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: spk.publicKey,
                                               signedPreKeySignature: spk.signature, oneTimePreKey: nil, kemPreKey: signedMalformed)
        check(malformedBundle, .invalidKey, "malformed ek")
        // The same malformed ek unsigned: the signature is reported first.
        let unsignedMalformed = try PreKeyBundle.KEMKey(id: 5, publicKey: malformed, signature: kemKey.signature)
        check(try PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: 1, signedPreKey: spk.publicKey,
                               signedPreKeySignature: spk.signature, oneTimePreKey: nil, kemPreKey: unsignedMalformed),
              .invalidSignature, "malformed and unsigned ek")
        XCTAssertNoThrow(try X3DH.checkBundle(genuine))
        XCTAssertThrowsError(try PreKeyBundle.KEMKey(id: 5, publicKey: Array(malformed.dropLast()), signature: kemKey.signature)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
        XCTAssertThrowsError(try PreKeyBundle.KEMKey(id: 5, publicKey: malformed, signature: Array(kemKey.signature.dropLast()))) {
            XCTAssertEqual($0 as? SessionError, .invalidSignature)
        }
    }

    func testTheInitiatorsPostQuantumPolicy() throws {
        let kem = try mlkem()
        let (alice, bob, classicSPK, _, _) = try parties(oneTimePreKey: false)
        let classic = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: classicSPK, oneTimePreKey: nil)
        let spk = try SignedPreKey(id: 2, signedBy: bob, signsKEMPreKeys: true, using: random)
        let hybrid = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: spk, oneTimePreKey: nil,
                                  kemPreKey: try KEMPreKey(id: 5, kind: .oneTime, signedBy: bob, kem: kem, using: random))
        let required = try SessionConfiguration(requirePostQuantum: true)
        XCTAssertThrowsError(try SessionState(initiatingWith: hybrid, identity: alice, localAddress: aliceAddress,
                                              remoteAddress: bobAddress, kem: nil, random: random)) {
            XCTAssertEqual($0 as? SessionError, .kemUnavailable)
        }
        XCTAssertThrowsError(try SessionState(initiatingWith: classic, identity: alice, localAddress: aliceAddress,
                                              remoteAddress: bobAddress, kem: kem, configuration: required, random: random)) {
            XCTAssertEqual($0 as? SessionError, .postQuantumRequired)
        }
        // The bundle's own checks come first: a forged classic bundle is a bad signature even then.
        let forged = try bundle(bob.publicKey, classicSPK.publicKey, signature: flipped(classicSPK.signature, at: 5))
        XCTAssertThrowsError(try SessionState(initiatingWith: forged, identity: alice, localAddress: aliceAddress,
                                              remoteAddress: bobAddress, kem: kem, configuration: required, random: random)) {
            XCTAssertEqual($0 as? SessionError, .invalidSignature)
        }
        var session = try SessionState(initiatingWith: hybrid, identity: alice, localAddress: aliceAddress, remoteAddress: bobAddress,
                                       kem: kem, configuration: required, random: random)
        let message = try session.encrypt([1])
        XCTAssertEqual(message[69], 0x02, "flags: a KEM part and no one-time prekey")
        XCTAssertNotNil(session.pendingPreKeyPrefix?.kem)
        // A classic session with a KEM available is still fine without the requirement.
        XCTAssertNoThrow(try SessionState(initiatingWith: classic, identity: alice, localAddress: aliceAddress,
                                          remoteAddress: bobAddress, kem: kem, random: random))
    }
}
