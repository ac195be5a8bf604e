import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// SPEC §3's KEM prekey through `SessionManager`: hybrid sessions between managers with
/// ML-KEM-768, the one-time and last-resort KEM prekeys, and the post-quantum policy
/// (`kemUnavailable`, `postQuantumRequired`, the stripped-KEM rule and its migration switch).
final class PostQuantumSessionTests: XCTestCase {
    /// A prekey message without a KEM part to `bundle`'s signed prekey, as a peer that ignores
    /// the signed `kem` bit would build it (the library's initiator refuses such a bundle:
    /// `checkBundle` verifies spk_sig with `kem` = whether a KEM prekey is present). Assembled
    /// from X3DH and the ratchet directly.
    static func classicPreKeyMessage(
        _ plaintext: [UInt8], from identity: IdentityKeyPair, at sender: ProtocolAddress, to bundle: PreKeyBundle,
        at recipient: ProtocolAddress, random: any RandomSource
    ) throws -> [UInt8] {
        let ephemeral = try X25519.PrivateKey(using: random)
        let prefix = PreKeyMessage.Prefix(identityKey: identity.publicKey, baseKey: ephemeral.publicKey,
                                          signedPreKeyID: bundle.signedPreKeyID, oneTimePreKeyID: bundle.oneTimePreKey?.id, kem: nil)
        let agreement = try X3DH.initiate(identity: identity, localAddress: sender, remoteAddress: recipient, bundle: bundle,
                                          ephemeralKey: ephemeral, prefix: prefix, kemSharedSecret: nil)
        let ratchet = try DoubleRatchet.initiator(sharedSecret: agreement.sharedSecret, remoteSignedPreKey: bundle.signedPreKey, random: random)
        var session = SessionState(
            role: .initiator, configuration: .default, localIdentityKey: identity.publicKey, remoteIdentityKey: bundle.identityKey,
            localAddress: sender, remoteAddress: recipient, baseKey: ephemeral.publicKey, preKeyPrefixDigest: prefix.digest,
            pendingPreKeyPrefix: prefix, ratchet: ratchet)
        return try session.encrypt(plaintext)
    }

    // MARK: Hybrid sessions

    func testTwoManagersWithMLKEMTalkOnAHybridSessionAndTheOneTimeKEMPrekeyIsDeletedWithTheSessionsCommit() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 1001, server: server, kem: kem)
        let bob = try await TestDevice("bob", 1, seed: 1002, server: server, kem: kem)
        let published = await server.oneTimeKEMPreKeyCount(for: bob.address)
        XCTAssertEqual(published, 50)

        let fetched = await server.bundle(for: bob.address)
        let bundle = try XCTUnwrap(fetched)
        let kemKey = try XCTUnwrap(bundle.kemPreKey, "a manager with a KEM publishes KEM prekeys")
        let opk = try XCTUnwrap(bundle.oneTimePreKey)
        try await alice.manager.processBundle(bundle, for: bob.address)
        let first = try await alice.manager.encrypt(utf8("hybrid hello"), to: bob.address)
        // 0x22 || IK_A || EK_A || spk_id || flags = 0x07 || opk_id || kem_id || CT (1088)
        // || registration id || message.
        XCTAssertEqual(first[0], 0x22)
        XCTAssertEqual(first[69], 0x07, "flags: a one-time prekey, a KEM prekey and a registration id")
        XCTAssertEqual(Array(first[70 ..< 74]), u32(opk.id))
        XCTAssertEqual(Array(first[74 ..< 78]), u32(kemKey.id))
        let aliceID = try await alice.manager.localRegistrationID()
        XCTAssertEqual(Array(first[70 + 4 + 1092 ..< 70 + 4 + 1092 + 4]), u32(aliceID.rawValue))
        let expectedCount: Int = 70 + 4 + 1092 + 4 + 41 + 64 + 16      // prefix, opk id, KEM part, id, header, padded, tag
        XCTAssertEqual(first.count, expectedCount)
        let parsed = try PreKeyMessage(serialized: first)
        XCTAssertEqual(parsed.prefix.kem?.preKeyID, kemKey.id)
        XCTAssertEqual(parsed.prefix.kem?.ciphertext.count, 1088)

        // A failed commit deletes nothing: the one-time KEM prekey and the session go together.
        await bob.store.setFailWrites(true)
        let beforeFailure = await bob.snapshot()
        await assertThrowsAsync(.storage("injected write failure")) { try await bob.manager.decrypt(first, from: alice.address) }
        let afterFailure = await bob.snapshot()
        XCTAssertEqual(afterFailure, beforeFailure)
        await bob.store.setFailWrites(false)

        let writes = await bob.store.writeAttempts
        let received = try await bob.manager.decrypt(first, from: alice.address)
        XCTAssertEqual(received.plaintext, utf8("hybrid hello"))
        XCTAssertTrue(received.establishedSession)
        let writesAfter = await bob.store.writeAttempts
        XCTAssertEqual(writesAfter - writes, 1, "one store write: the session and the consumption together")
        let keys = try await bob.storedPreKeys()
        XCTAssertNil(keys.kemPreKey(id: kemKey.id), "the one-time KEM prekey is gone")
        XCTAssertNil(keys.oneTimePreKey(id: opk.id))
        XCTAssertEqual(keys.oneTimeKEMPreKeys.count, 49)
        XCTAssertNotNil(keys.currentSignedPreKey.lastResortKEMPreKey, "the last-resort KEM prekey stays")
        XCTAssertEqual(keys.recordedBaseKeyCount(signedPreKeyID: bundle.signedPreKeyID), 1)
        let recorded = await bob.base.hasRecordedBaseKey(parsed.prefix.baseKey, signedPreKeyID: bundle.signedPreKeyID)
        XCTAssertTrue(recorded, "EK_A recorded by the store in the same write")
        let stored = await bob.base.loadSession(for: alice.address)
        XCTAssertEqual(stored?.currentSession?.preKeyPrefixDigest, SHA256.hash(Array(first[1 ..< 70 + 4 + 1092 + 4])),
                       "the session was created from the hybrid prefix")

        // Both directions; Alice stops sending the KEM part once she has a reply.
        for round in 0 ..< 3 {
            let reply = try await bob.manager.encrypt(plaintext(round), to: alice.address)
            XCTAssertEqual(reply.first, 0x21)
            let atAlice = try await alice.manager.decrypt(reply, from: bob.address)
            XCTAssertEqual(atAlice.plaintext, plaintext(round))
            let next = try await alice.manager.encrypt(plaintext(100 + round), to: bob.address)
            XCTAssertEqual(next.first, 0x21)
            let atBob = try await bob.manager.decrypt(next, from: alice.address)
            XCTAssertEqual(atBob.plaintext, plaintext(100 + round))
        }
    }

    func testWhenOneTimeKEMPrekeysRunOutTheLastResortOneIsUsedAndKept() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 2, oneTimePreKeyLowWaterMark: 1)
        let bob = try await TestDevice("bob", 1, seed: 1010, server: server, policy: policy, kem: kem)
        let initial = try await bob.storedPreKeys()
        let lastResort = try XCTUnwrap(initial.currentSignedPreKey.lastResortKEMPreKey)
        XCTAssertEqual(lastResort.kind, .lastResort)
        XCTAssertEqual(initial.oneTimeKEMPreKeys.count, 2)

        var usedKEMIDs: [UInt32] = []
        for index in 0 ..< 4 {
            let sender = try await TestDevice("sender\(index)", 1, seed: 1011 + UInt64(index), server: server, kem: kem)
            let fetched = await server.bundle(for: bob.address)
            let bundle = try XCTUnwrap(fetched)
            let kemID = try XCTUnwrap(bundle.kemPreKey?.id, "every bundle of a kem = 1 signed prekey carries a KEM prekey")
            usedKEMIDs.append(kemID)
            try await sender.manager.processBundle(bundle, for: bob.address)
            let message = try await sender.manager.encrypt([UInt8(index)], to: bob.address)
            XCTAssertEqual(message[69] & 0x02, 0x02)
            let received = try await bob.manager.decrypt(message, from: sender.address)
            XCTAssertEqual(received.plaintext, [UInt8(index)])
            let keys = try await bob.storedPreKeys()
            XCTAssertNotNil(keys.kemPreKey(id: lastResort.id), "the last-resort KEM prekey is kept (after message \(index))")
            XCTAssertEqual(keys.currentSignedPreKey.lastResortKEMPreKey?.id, lastResort.id)
            XCTAssertEqual(keys.oneTimeKEMPreKeys.count, max(0, 1 - index))
        }
        XCTAssertEqual(usedKEMIDs, initial.oneTimeKEMPreKeys.map(\.id) + [lastResort.id, lastResort.id],
                       "the one-time KEM prekeys first, then the last-resort one, twice")
    }

    /// A misbehaving server hands the same one-time KEM prekey (and no one-time prekey) to two
    /// initiators: both X3DH runs succeed, but the commit deletes the KEM prekey with the first
    /// session, so the second commit finds it gone and stores nothing.
    func testAOneTimeKEMPrekeyCreatesOneSessionEvenWhenTwoPrekeyMessagesNamingItAreDecryptedConcurrently() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let bob = try await TestDevice("bob", 1, seed: 1060, server: server, kem: kem)
        let alice = try await TestDevice("alice", 1, seed: 1061, server: server, kem: kem)
        let carol = try await TestDevice("carol", 1, seed: 1062, server: server, kem: kem)
        let shared = await server.bundle(for: bob.address, consumingOneTimePreKey: false)
        let published = try XCTUnwrap(shared)
        let kemID = try XCTUnwrap(published.kemPreKey?.id)
        let withoutOPK = try PreKeyBundle(identityKey: published.identityKey, signedPreKeyID: published.signedPreKeyID,
                                          signedPreKey: published.signedPreKey, signedPreKeySignature: published.signedPreKeySignature,
                                          oneTimePreKey: nil, kemPreKey: published.kemPreKey)
        try await alice.manager.processBundle(withoutOPK, for: bob.address)
        try await carol.manager.processBundle(withoutOPK, for: bob.address)
        let fromAlice = try await alice.manager.encrypt(utf8("from alice"), to: bob.address)
        let fromCarol = try await carol.manager.encrypt(utf8("from carol"), to: bob.address)
        XCTAssertEqual([fromAlice[69], fromCarol[69]], [0x06, 0x06], "a KEM prekey and a registration id, no one-time prekey")

        // Both run at once, every store call yielding; the prekeys lock serialises the X3DH
        // runs, so the second finds the one-time KEM prekey gone before it decrypts.
        await bob.store.setYields(true)
        async let aliceResult = capture { () async throws(SessionError) -> [UInt8] in
            try await bob.manager.decrypt(fromAlice, from: alice.address).plaintext
        }
        async let carolResult = capture { () async throws(SessionError) -> [UInt8] in
            try await bob.manager.decrypt(fromCarol, from: carol.address).plaintext
        }
        let results = await [aliceResult, carolResult]
        XCTAssertEqual(results.compactMap { try? $0.get() }.count, 1, "exactly one prekey message creates a session")
        XCTAssertEqual(results.compactMap(\.error), [.unknownPreKey])
        let keys = try await bob.storedPreKeys()
        XCTAssertNil(keys.kemPreKey(id: kemID))
        XCTAssertEqual(keys.oneTimeKEMPreKeys.count, 49)
        let addresses = await bob.base.addresses()
        XCTAssertEqual(addresses.count, 1, "only the winner's session is stored")
    }

    // MARK: Policy

    func testAManagerWithoutAKEMRefusesABundleWithAKEMPrekeyAndStoresNothing() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 1020, server: server)
        let bob = try await TestDevice("bob", 1, seed: 1021, server: server, kem: kem)
        let fetched = await server.bundle(for: bob.address)
        let bundle = try XCTUnwrap(fetched)
        XCTAssertNotNil(bundle.kemPreKey)
        let before = await alice.snapshot()
        await assertThrowsAsync(.kemUnavailable) { try await alice.manager.processBundle(bundle, for: bob.address) }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before)
        let checks = await alice.trust.checks
        XCTAssertEqual(checks, 0, "refused before the trust evaluator is asked")
        // A forged bundle is still reported as such first.
        let forged = try PreKeyBundle(identityKey: bundle.identityKey, signedPreKeyID: bundle.signedPreKeyID,
                                      signedPreKey: bundle.signedPreKey, signedPreKeySignature: flipped(bundle.signedPreKeySignature, at: 9),
                                      oneTimePreKey: bundle.oneTimePreKey, kemPreKey: bundle.kemPreKey)
        await assertThrowsAsync(.invalidSignature) { try await alice.manager.processBundle(forged, for: bob.address) }
        // A server that strips the KEM prekey breaks the signature instead of downgrading the session.
        let stripped = try PreKeyBundle(identityKey: bundle.identityKey, signedPreKeyID: bundle.signedPreKeyID,
                                        signedPreKey: bundle.signedPreKey, signedPreKeySignature: bundle.signedPreKeySignature,
                                        oneTimePreKey: bundle.oneTimePreKey, kemPreKey: nil)
        await assertThrowsAsync(.invalidSignature) { try await alice.manager.processBundle(stripped, for: bob.address) }
    }

    func testRequirePostQuantumRefusesAClassicBundleAndAClassicPrekeyMessage() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let required = try SessionConfiguration(requirePostQuantum: true)
        let alice = try await TestDevice("alice", 1, seed: 1030, server: server, kem: kem, configuration: required)
        let classicBob = try await TestDevice("bob", 1, seed: 1031, server: server)
        let fetched = await server.bundle(for: classicBob.address)
        let classicBundle = try XCTUnwrap(fetched)
        XCTAssertNil(classicBundle.kemPreKey)
        let before = await alice.snapshot()
        await assertThrowsAsync(.postQuantumRequired) { try await alice.manager.processBundle(classicBundle, for: classicBob.address) }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before)

        // As responder: Carol requires post-quantum sessions but still holds classic prekeys (say,
        // from before she had a KEM); a classic prekey message to them is refused, changing nothing.
        let carolRandom = SeededRandomSource(seed: 1032)
        let carolIdentity = try IdentityKeyPair(using: carolRandom)
        let classicKeys = try LocalPreKeys(identity: carolIdentity, now: FakeClock().now(), random: carolRandom)
        let carol = try await TestDevice("carol", 1, seed: 1033, server: server, identity: carolIdentity, kem: kem,
                                         configuration: required, preKeys: classicKeys, publish: false)
        let dave = try await TestDevice("dave", 1, seed: 1034, server: server)
        try await dave.manager.processBundle(try XCTUnwrap(classicKeys.bundle(identityKey: carolIdentity.publicKey, oneTimePreKeyID: 1)),
                                             for: carol.address)
        let classicMessage = try await dave.manager.encrypt(utf8("classic"), to: carol.address)
        XCTAssertEqual(classicMessage[69], 0x05, "a one-time prekey and a registration id")
        let carolBefore = await carol.snapshot()
        await assertThrowsAsync(.postQuantumRequired) { try await carol.manager.decrypt(classicMessage, from: dave.address) }
        let carolAfter = await carol.snapshot()
        XCTAssertEqual(carolAfter, carolBefore, "no session, no one-time prekey consumed, no EK_A recorded")

        // Required and migration both on: the requirement wins, also for a kem = 1 signed prekey.
        let both = try SessionConfiguration(requirePostQuantum: true, allowsClassicSessionsDuringMigration: true)
        let erin = try await TestDevice("erin", 1, seed: 1035, server: server, kem: kem, configuration: both)
        let erinBundle = try await server.requireBundle(for: erin.address)
        let stripped = try Self.classicPreKeyMessage(utf8("no KEM part"), from: dave.identity, at: dave.address, to: erinBundle,
                                                     at: erin.address, random: SeededRandomSource(seed: 1036))
        await assertThrowsAsync(.postQuantumRequired) { try await erin.manager.decrypt(stripped, from: dave.address) }

        // A hybrid session is fine under the requirement, both ways.
        try await alice.manager.processBundle(erinBundle, for: erin.address)
        let hybrid = try await alice.manager.encrypt(utf8("pq"), to: erin.address)
        let atErin = try await erin.manager.decrypt(hybrid, from: alice.address)
        XCTAssertEqual(atErin.plaintext, utf8("pq"))
    }

    func testAClassicPrekeyMessageToAKEMSignedPrekeyIsInvalidMessageUnlessMigrationAllowsIt() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 1040, server: server)
        let bob = try await TestDevice("bob", 1, seed: 1041, server: server, kem: kem)
        let fetched = await server.bundle(for: bob.address)
        let bundle = try XCTUnwrap(fetched)
        let opkID = try XCTUnwrap(bundle.oneTimePreKey?.id)
        let kemID = try XCTUnwrap(bundle.kemPreKey?.id)
        let message = try Self.classicPreKeyMessage(utf8("classic to kem = 1"), from: alice.identity, at: alice.address, to: bundle,
                                                    at: bob.address, random: SeededRandomSource(seed: 1042))
        XCTAssertEqual(message[69], 0x01, "a one-time prekey and no KEM part")
        let before = await bob.snapshot()
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.decrypt(message, from: alice.address) }
        let after = await bob.snapshot()
        XCTAssertEqual(after, before, "a stripped KEM prekey creates nothing and consumes nothing")
        let asked = await bob.trust.askedAbout
        XCTAssertEqual(asked, [])

        // The same store through a manager configured for a migration accepts it (a session
        // without post-quantum protection); the one-time KEM prekey it did not use stays.
        let migration = try SessionConfiguration(allowsClassicSessionsDuringMigration: true)
        let migrating = SessionManager(store: bob.store, trust: bob.trust, localAddress: bob.address, kem: kem,
                                       configuration: migration, random: bob.random)
        let received = try await migrating.decrypt(message, from: alice.address)
        XCTAssertEqual(received.plaintext, utf8("classic to kem = 1"))
        XCTAssertTrue(received.establishedSession)
        let keys = try await bob.storedPreKeys()
        XCTAssertNil(keys.oneTimePreKey(id: opkID))
        XCTAssertNotNil(keys.kemPreKey(id: kemID), "no KEM part, so the KEM prekey was not consumed")
        // The hybrid message of a KEM-capable sender still works on the same configuration.
        let carol = try await TestDevice("carol", 1, seed: 1043, server: server, kem: kem)
        try await carol.startSession(with: bob.address, server: server)
        let hybrid = try await carol.manager.encrypt(utf8("pq"), to: bob.address)
        let atBob = try await migrating.decrypt(hybrid, from: carol.address)
        XCTAssertEqual(atBob.plaintext, utf8("pq"))
    }

    func testAManagerWithAKEMPublishesOnlyKEMSignedPrekeysAndRotatesAClassicOneAtTheNextMaintenance() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let clock = FakeClock()
        let fresh = try await TestDevice("fresh", 1, seed: 1050, server: server, kem: kem, publish: false)
        let upload = try await fresh.manager.maintainPreKeys()
        let signed = try XCTUnwrap(upload.signedPreKey)
        XCTAssertTrue(signed.signsKEMPreKeys)
        // spk_sig = sign(IK, "SessionKit SPK v2" || 0x05 || SPK || 0x01), by hand.
        XCTAssertTrue(fresh.identity.publicKey.isValidSignature(
            signed.signature, for: Array("SessionKit SPK v2".utf8) + [0x05] + signed.publicKey.rawRepresentation + [0x01]))
        let lastResort = try XCTUnwrap(upload.lastResortKEMPreKey)
        XCTAssertEqual(upload.oneTimeKEMPreKeys.count, 50)
        for key in [lastResort] + upload.oneTimeKEMPreKeys {
            XCTAssertTrue(fresh.identity.publicKey.isValidSignature(
                key.signature, for: Array("SessionKit KEM v2".utf8) + [0x0B] + key.publicKey), "kem_sig of \(key.id)")
            XCTAssertTrue(KEMEncapsulationKey.isWellFormed(key.publicKey))
        }
        XCTAssertEqual(Set(([lastResort] + upload.oneTimeKEMPreKeys).map(\.id)).count, 51, "KEM prekey ids are distinct")

        // A device that had classic prekeys and now has a KEM rotates at its next upkeep, well
        // before the 7 days, and keeps the classic key for its grace period.
        let random = SeededRandomSource(seed: 1051)
        let identity = try IdentityKeyPair(using: random)
        let classic = try LocalPreKeys(identity: identity, now: clock.now(), random: random)
        let upgraded = try await TestDevice("bob", 1, seed: 1052, server: server, clock: clock, identity: identity, kem: kem,
                                            preKeys: classic, publish: false)
        let classicBundle = try XCTUnwrap(classic.bundle(identityKey: identity.publicKey, oneTimePreKeyID: 3))
        let alice = try await TestDevice("alice", 1, seed: 1053, server: server)
        try await alice.manager.processBundle(classicBundle, for: upgraded.address)
        let inFlight = try await alice.manager.encrypt(utf8("sent to the classic key"), to: upgraded.address)

        let rotation = try await upgraded.manager.maintainPreKeys()
        XCTAssertEqual(rotation.signedPreKey?.id, 2)
        XCTAssertEqual(rotation.signedPreKey?.signsKEMPreKeys, true)
        XCTAssertNotNil(rotation.lastResortKEMPreKey)
        XCTAssertEqual(rotation.oneTimeKEMPreKeys.count, 50)
        XCTAssertTrue(rotation.oneTimePreKeys.isEmpty, "the 50 classic one-time prekeys are still held")
        let keys = try await upgraded.storedPreKeys()
        XCTAssertTrue(keys.currentSignedPreKey.key.signsKEMPreKeys)
        XCTAssertEqual(keys.previousSignedPreKeys.map(\.key.id), [1])
        XCTAssertFalse(keys.previousSignedPreKeys[0].key.signsKEMPreKeys)
        let again = try await upgraded.manager.maintainPreKeys()
        XCTAssertTrue(again.isEmpty, "rotated once")
        // The retired classic signed prekey (kem = 0) still takes a classic message.
        let received = try await upgraded.manager.decrypt(inFlight, from: alice.address)
        XCTAssertEqual(received.plaintext, utf8("sent to the classic key"))
        // Its bundles from now on carry a KEM prekey.
        await server.publish(rotation, for: upgraded.address)
        let newBundle = await server.bundle(for: upgraded.address)
        XCTAssertNotNil(newBundle?.kemPreKey)
        XCTAssertEqual(newBundle?.signedPreKeyID, 2)
    }
}
