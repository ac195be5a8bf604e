import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit

/// The session, X3DH and prekey types render without their secrets (see `Redaction`): root,
/// chain and message keys, ratchet private keys, skipped keys, identity seeds, prekey private
/// keys and the X3DH shared secret.
final class SessionSecretRedactionTests: XCTestCase {
    /// Every secret a session holds, with a name for the failure message.
    static func secrets(of session: SessionState) -> [(String, [UInt8])] {
        let ratchet = session.ratchet
        var secrets: [(String, [UInt8])] = [
            ("root key", ratchet.rootKey.storage.bytes),
            ("ratchet private key", ratchet.sendingRatchetKey.rawRepresentation),
        ]
        if let chain = ratchet.sendingChain { secrets.append(("sending chain key", chain.storage.bytes)) }
        if let chain = ratchet.receivingChain { secrets.append(("receiving chain key", chain.chainKey.storage.bytes)) }
        for (index, entry) in ratchet.skippedKeys.inAgeOrder.enumerated() {
            secrets.append(("skipped key \(index)", entry.messageKey.storage.bytes))
        }
        return secrets
    }

    /// Alice and Bob with chains in both directions and skipped keys on Bob's side.
    func conversation() throws -> Conversation {
        var conversation = try Conversation(seed: 811)
        let first = try conversation.aliceSends(plaintext(0))
        _ = try conversation.aliceSends(plaintext(1))
        let third = try conversation.aliceSends(plaintext(2))
        _ = try conversation.bobReceives(third)
        _ = try conversation.bobReceives(first)
        _ = try conversation.aliceReceives(try conversation.bobSends(plaintext(3)))
        return conversation
    }

    func testSessionsAndTheirPartsRenderWithoutAnyKey() throws {
        let conversation = try conversation()
        let alice = try XCTUnwrap(conversation.alice)
        let bob = try XCTUnwrap(conversation.bob)
        XCTAssertEqual(bob.skippedMessageKeyCount, 1, "Bob holds the key of the message not yet received")
        for (name, session) in [("Alice", alice), ("Bob", bob)] {
            let secrets = Self.secrets(of: session)
            XCTAssertGreaterThanOrEqual(secrets.count, 4)
            for (what, secret) in secrets {
                Redaction.assertHides(secret, in: session, "\(name)'s SessionState \(what)")
                Redaction.assertHides(secret, in: session.ratchet, "\(name)'s DoubleRatchet \(what)")
                Redaction.assertHides(secret, in: SessionRecord(currentSession: session), "\(name)'s SessionRecord \(what)")
            }
            Redaction.assertHides(session.ratchet.rootKey.storage.bytes, in: session.ratchet.rootKey, "RootKey")
            if let chain = session.ratchet.sendingChain { Redaction.assertHides(chain.storage.bytes, in: chain, "ChainKey") }
            if let chain = session.ratchet.receivingChain { Redaction.assertHides(chain.chainKey.storage.bytes, in: chain, "ReceiverChain") }
        }
        for (index, entry) in bob.ratchet.skippedKeys.inAgeOrder.enumerated() {
            Redaction.assertHides(entry.messageKey.storage.bytes, in: bob.ratchet.skippedKeys, "SkippedMessageKeys \(index)")
            Redaction.assertHides(entry.messageKey.storage.bytes, in: entry.messageKey, "MessageKey \(index)")
        }
    }

    func testASessionRendersTheSameWhateverItsRootKey() throws {
        // Nothing derived from the root key is shown either: flip a bit of it in the persisted
        // body and compare the renderings of the two sessions.
        let bob = try XCTUnwrap(try conversation().bob)
        let blob = bob.serialized()
        var body = Array(blob[6 ..< (blob.count - 16)])
        // Version-2 body: role, generation, maxSkip, maxStored, two identity keys, two addresses, EK_A,
        // SHA-256(P), the pending-prefix flag (a responder has none), then RK.
        let pendingOffset = 1 + 8 + 4 + 4 + 32 + 32 + encodeAddress("bob", 7).count + encodeAddress("alice", 1).count + 32 + 32
        XCTAssertEqual(body[pendingOffset], 0)
        let rootKeyOffset = pendingOffset + 1
        XCTAssertEqual(Array(body[rootKeyOffset ..< rootKeyOffset + 32]), bob.ratchet.rootKey.storage.bytes, "root key located")
        body[rootKeyOffset] ^= 0x01
        let head = Array("SKST".utf8) + [StateKind.session.rawValue, blob[5]] + body
        let other = try SessionState(serialized: head + SHA256.hash(head).prefix(16))
        XCTAssertNotEqual(other.ratchet.rootKey.storage.bytes, bob.ratchet.rootKey.storage.bytes)
        // Both loaded from bytes, so that their bookkeeping (skipped-key sequence numbers) matches.
        let reloaded = try SessionState(serialized: blob)
        Redaction.assertRendersIndependentlyOfSecret(reloaded, other, "SessionState")
    }

    func testIdentityAndPrekeysRenderTheirPublicKeysOnly() throws {
        let seed = Redaction.secrets.0
        let identity = try IdentityKeyPair(seed: seed)
        Redaction.assertHides(seed, in: identity, "IdentityKeyPair")
        XCTAssertTrue(identity.description.contains(identity.publicKey.hexString))

        let signedKey = Redaction.secrets.1
        let signed = try SignedPreKey(
            id: 5, privateKey: signedKey,
            signature: identity.privateKey.signature(for: SignedPreKey.signedBytes(
                publicKey: try X25519.PrivateKey(rawRepresentation: signedKey).publicKey, signsKEMPreKeys: false)),
            signsKEMPreKeys: false)
        Redaction.assertHides(signedKey, in: signed, "SignedPreKey")
        let oneTimeKey = (0 ..< 32).map { UInt8(0x90 &+ $0) }
        let oneTime = try OneTimePreKey(id: 9, privateKey: oneTimeKey)
        Redaction.assertHides(oneTimeKey, in: oneTime, "OneTimePreKey")
        let set = PreKeySet(signedPreKeys: [signed], oneTimePreKeys: [oneTime])
        for secret in [signedKey, oneTimeKey] { Redaction.assertHides(secret, in: set, "PreKeySet") }

        let random = SeededRandomSource(seed: 812)
        let keys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 1_700_000_000), random: random)
        for key in keys.oneTimePreKeys.prefix(5) {
            Redaction.assertHides(key.privateKey.rawRepresentation, in: keys, "LocalPreKeys one-time \(key.id)")
        }
        Redaction.assertHides(keys.currentSignedPreKey.key.privateKey.rawRepresentation, in: keys, "LocalPreKeys signed")
        Redaction.assertHides(keys.currentSignedPreKey.key.privateKey.rawRepresentation, in: keys.currentSignedPreKey, "SignedPreKeyEntry")
    }

    func testKEMPreKeysRenderWithoutTheirSeed() throws {
        let kem = try mlkem()
        let random = SeededRandomSource(seed: 815)
        let identity = try IdentityKeyPair(using: random)
        let key = try KEMPreKey(id: 3, kind: .oneTime, signedBy: identity, kem: kem, using: random)
        let seed = key.withUnsafeSeedBytes { Array($0) }
        XCTAssertEqual(seed.count, 64)
        Redaction.assertHides(seed, in: key, "KEMPreKey")
        Redaction.assertHides(seed, in: PreKeySet(signedPreKeys: [], kemPreKeys: [key]), "PreKeySet with a KEM prekey")
        let keys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 1_700_000_000),
                                    policy: try PreKeyPolicy(oneTimePreKeyBatchSize: 2, oneTimePreKeyLowWaterMark: 1), kem: kem, random: random)
        for kemKey in keys.oneTimeKEMPreKeys + [try XCTUnwrap(keys.currentSignedPreKey.lastResortKEMPreKey)] {
            Redaction.assertHides(kemKey.withUnsafeSeedBytes { Array($0) }, in: keys, "LocalPreKeys KEM prekey \(kemKey.id)")
        }
        let encapsulation = try kem.encapsulate(to: key.publicKey)
        Redaction.assertHides(encapsulation.sharedSecret.bytes, in: encapsulation, "KEMEncapsulation")
    }

    func testAnX3DHAgreementRendersWithoutItsSharedSecret() throws {
        let conversation = try Conversation(seed: 813)
        let bundle = PreKeyBundle(identityKey: conversation.bobIdentity.publicKey, signedPreKey: conversation.signedPreKey,
                                  oneTimePreKey: conversation.oneTimePreKey)
        let ephemeral = try X25519.PrivateKey(using: SeededRandomSource(seed: 814))
        let prefix = PreKeyMessage.Prefix(identityKey: conversation.aliceIdentity.publicKey, baseKey: ephemeral.publicKey,
                                          signedPreKeyID: bundle.signedPreKeyID, oneTimePreKeyID: bundle.oneTimePreKey?.id, kem: nil)
        let agreement = try X3DH.initiate(identity: conversation.aliceIdentity, localAddress: conversation.aliceAddress,
                                          remoteAddress: conversation.bobAddress, bundle: bundle, ephemeralKey: ephemeral,
                                          prefix: prefix, kemSharedSecret: nil)
        Redaction.assertHides(agreement.sharedSecret.withUnsafeBytes { Array($0) }, in: agreement, "X3DHAgreement")
    }

    func testTheInMemoryStoreAndTheManagerDoNotRenderTheSecretsTheyHold() async throws {
        let conversation = try conversation()
        let store = InMemoryProtocolStore(identity: conversation.bobIdentity)
        let bob = try XCTUnwrap(conversation.bob)
        var commit = StoreCommit()
        commit.store(SessionRecord(currentSession: bob), for: conversation.aliceAddress)
        try await store.commit(commit)
        let seed = conversation.bobIdentity.privateKey.seedRepresentation
        Redaction.assertHides(seed, in: store, "InMemoryProtocolStore identity")
        for (what, secret) in Self.secrets(of: bob) { Redaction.assertHides(secret, in: store, "InMemoryProtocolStore \(what)") }
        let manager = SessionManager(store: store, trust: TestTrustEvaluator(), localAddress: conversation.bobAddress)
        _ = try await manager.maintainPreKeys()
        Redaction.assertHides(seed, in: manager, "SessionManager")
    }
}
