import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// The post-quantum policy beyond new sessions (issue 17): sessions record whether they are
/// post-quantum (persisted, readable by the app); with `requirePostQuantum` a classic session
/// is neither used to send nor promoted by a message; a device seen with KEM prekeys is pinned,
/// so its replayed classic bundle is refused; and a responder that switched to KEM prekeys
/// refuses classic prekey messages to its old classic signed prekey once the in-flight window
/// (`PreKeyPolicy.classicPreKeyMessageWindow`, 7 days) is over.
final class PostQuantumPolicyTests: XCTestCase {
    // MARK: Sessions record whether they are post-quantum

    func testSessionsRecordWhetherTheyArePostQuantumAndTheAppReadsIt() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 8001, server: server, kem: kem)
        let bob = try await TestDevice("bob", 1, seed: 8002, server: server, kem: kem)
        let classicCarol = try await TestDevice("carol", 1, seed: 8003, server: server)
        await assertThrowsAsync(.noSession) { try await alice.manager.isPostQuantum(sessionWith: bob.address) }
        let unknownPinned = try await alice.manager.requiresPostQuantum(for: bob.address)
        XCTAssertFalse(unknownPinned)

        try await alice.startSession(with: bob.address, server: server)
        let hybrid = try await alice.manager.encrypt(utf8("pq"), to: bob.address)
        _ = try await bob.manager.decrypt(hybrid, from: alice.address)
        try await alice.startSession(with: classicCarol.address, server: server)
        let classic = try await alice.manager.encrypt(utf8("classic"), to: classicCarol.address)
        _ = try await classicCarol.manager.decrypt(classic, from: alice.address)

        let aliceToBob = try await alice.manager.isPostQuantum(sessionWith: bob.address)
        let bobToAlice = try await bob.manager.isPostQuantum(sessionWith: alice.address)
        let aliceToCarol = try await alice.manager.isPostQuantum(sessionWith: classicCarol.address)
        let carolToAlice = try await classicCarol.manager.isPostQuantum(sessionWith: alice.address)
        XCTAssertEqual([aliceToBob, bobToAlice, aliceToCarol, carolToAlice], [true, true, false, false],
                       "initiator and responder sides both know")

        // Persisted: the record's blob (and a session's own blob) carries the flag and the pin.
        for (device, peer, postQuantum) in [(alice, bob.address, true), (bob, alice.address, true), (alice, classicCarol.address, false)] {
            let stored = await device.base.loadSession(for: peer)
            let record = try XCTUnwrap(stored)
            let reloaded = try SessionRecord(serialized: record.serialized())
            XCTAssertEqual(reloaded.currentSession?.isPostQuantum, postQuantum)
            XCTAssertEqual(reloaded.requiresPostQuantum, postQuantum, "a post-quantum session pins the device")
            let session = try XCTUnwrap(record.currentSession)
            XCTAssertEqual(try SessionState(serialized: session.serialized()).isPostQuantum, postQuantum)
            XCTAssertTrue(session.description.contains("postQuantum: \(postQuantum)"))
        }
    }

    /// A session stored by the previous version (no flag) loads as classic, except an initiator
    /// whose pending prefix has a KEM part.
    func testAVersionTwoSessionLoadsAsClassicUnlessItsPendingPrefixHasAKEMPart() throws {
        var conversation = try Conversation(seed: 8010, kem: try mlkem())
        _ = try conversation.aliceSends(plaintext(0))
        let hybridInitiator = try XCTUnwrap(conversation.alice)
        XCTAssertTrue(hybridInitiator.isPostQuantum)
        XCTAssertNotNil(hybridInitiator.pendingPreKeyPrefix?.kem)
        func versionTwo(_ session: SessionState) -> [UInt8] {
            // Without the checksum, the skipped keys' times (version 5) and the six bytes before
            // them: isPostQuantum, the registration id and the archived mark (version 4).
            var body = Array(session.serialized().dropLast(16).dropLast(8 * session.ratchet.skippedKeys.count).dropLast(6))
            body[5] = 2
            return body + SHA256.hash(body).prefix(16)
        }
        let loaded = try SessionState(serialized: versionTwo(hybridInitiator))
        XCTAssertTrue(loaded.isPostQuantum, "a pending prefix with a KEM part")
        XCTAssertEqual(loaded.serialized(), hybridInitiator.serialized())

        XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(1))), plaintext(1))
        let responder = try XCTUnwrap(conversation.bob)
        XCTAssertTrue(responder.isPostQuantum)
        XCTAssertFalse(try SessionState(serialized: versionTwo(responder)).isPostQuantum,
                       "nothing tells a version-2 responder session apart: classic")
    }

    // MARK: requirePostQuantum and existing classic sessions

    /// Alice had a classic session with Bob; Bob gained a KEM and Alice started a hybrid session
    /// from his new bundle, while a message of the classic session was in flight. Under
    /// `requirePostQuantum` that message is refused and the classic session stays previous
    /// (before this change it decrypted and became current again, and the next message went
    /// out on it); a classic current session is not used to send.
    func testRequirePostQuantumNeitherPromotesNorSendsOnAClassicSession() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let clock = FakeClock()
        let alice = try await TestDevice("alice", 1, seed: 8020, server: server, clock: clock, kem: kem)
        let bob = try await TestDevice("bob", 1, seed: 8021, server: server, clock: clock)
        try await alice.startSession(with: bob.address, server: server)
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("classic hello"), to: bob.address), from: alice.address)
        _ = try await alice.manager.decrypt(try await bob.manager.encrypt(utf8("classic reply"), to: alice.address), from: bob.address)
        // One more turn, so that Bob's next message is on a new ratchet key (a DH step at Alice).
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("classic turn"), to: bob.address), from: alice.address)

        // Bob gains a KEM and publishes KEM prekeys; a message of the classic session is in flight.
        let upgradedBob = SessionManager(store: bob.store, trust: bob.trust, localAddress: bob.address, kem: kem, clock: clock,
                                         random: bob.random)
        await server.publish(try await upgradedBob.maintainPreKeys(), for: bob.address)
        let inFlight = try await upgradedBob.encrypt(utf8("sent on the classic session"), to: alice.address)
        let inFlightToo = try await upgradedBob.encrypt(utf8("also on the classic session"), to: alice.address)
        try await alice.startSession(with: bob.address, server: server)
        let current = try await alice.manager.isPostQuantum(sessionWith: bob.address)
        XCTAssertTrue(current)

        let required = try SessionConfiguration(requirePostQuantum: true)
        let strict = SessionManager(store: alice.store, trust: alice.trust, localAddress: alice.address, kem: kem,
                                    configuration: required, clock: clock, random: alice.random)
        let before = await alice.snapshot()
        let draws = alice.random.drawCount
        await assertThrowsAsync(.postQuantumRequired) { try await strict.decrypt(inFlight, from: bob.address) }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before, "refused: nothing persisted, the classic session not promoted")
        XCTAssertEqual(alice.random.drawCount, draws, "a refused message draws no key, although it needed a DH step")
        let stillHybrid = try await strict.isPostQuantum(sessionWith: bob.address)
        XCTAssertTrue(stillHybrid)
        // The hybrid session is used to send, and works both ways.
        let hybrid = try await strict.encrypt(utf8("pq"), to: bob.address)
        let received1 = try await upgradedBob.decrypt(hybrid, from: alice.address)
        XCTAssertEqual(received1.plaintext, utf8("pq"))
        let received2 = try await strict.decrypt(try await upgradedBob.encrypt(utf8("pq reply"), to: alice.address), from: bob.address)
        XCTAssertEqual(received2.plaintext, utf8("pq reply"))

        // Without the requirement, the same message decrypts and its classic session becomes
        // current (SPEC §3); a manager that requires post-quantum sessions then refuses to send
        // on it, and refuses the next message of it too.
        let promoted = try await alice.manager.decrypt(inFlight, from: bob.address)
        XCTAssertEqual(promoted.plaintext, utf8("sent on the classic session"))
        let nowClassic = try await alice.manager.isPostQuantum(sessionWith: bob.address)
        XCTAssertFalse(nowClassic)
        let beforeSend = await alice.snapshot()
        await assertThrowsAsync(.postQuantumRequired) { try await strict.encrypt(utf8("not on classic"), to: bob.address) }
        let outcomes = try await strict.encrypt(utf8("fan-out"), toUser: "bob")
        XCTAssertEqual(outcomes.map(\.result), [.failure(.postQuantumRequired)])
        let afterSend = await alice.snapshot()
        XCTAssertEqual(afterSend, beforeSend)
        await assertThrowsAsync(.postQuantumRequired) { try await strict.decrypt(inFlightToo, from: bob.address) }
        let afterReceive = await alice.snapshot()
        XCTAssertEqual(afterReceive, beforeSend, "a message on the classic current session is refused too")
    }

    // MARK: The pin

    /// Bob's old classic bundle (fetched before he had a KEM, or kept by the server) is replayed
    /// after Alice had a post-quantum session with him: refused, before the trust evaluator is
    /// asked, whatever Alice's configuration. Before this change it started a classic session.
    func testADeviceSeenWithKEMPrekeysIsPinnedAndItsReplayedClassicBundleIsRefused() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let clock = FakeClock()
        let alice = try await TestDevice("alice", 1, seed: 8030, server: server, clock: clock, kem: kem)
        let bob = try await TestDevice("bob", 1, seed: 8031, server: server, clock: clock)
        let oldClassicBundle = try await server.requireBundle(for: bob.address)
        XCTAssertNil(oldClassicBundle.kemPreKey)
        let upgradedBob = SessionManager(store: bob.store, trust: bob.trust, localAddress: bob.address, kem: kem, clock: clock,
                                         random: bob.random)
        await server.publish(try await upgradedBob.maintainPreKeys(), for: bob.address)

        try await alice.startSession(with: bob.address, server: server)
        let first = try await alice.manager.encrypt(utf8("hybrid"), to: bob.address)
        _ = try await upgradedBob.decrypt(first, from: alice.address)
        let alicePinned = try await alice.manager.requiresPostQuantum(for: bob.address)
        let bobPinned = try await upgradedBob.requiresPostQuantum(for: alice.address)
        XCTAssertTrue(alicePinned, "the initiator pinned the device whose bundle carried a KEM prekey")
        XCTAssertTrue(bobPinned, "the responder pinned the device whose prekey message had a KEM part")

        let before = await alice.snapshot()
        let checks = await alice.trust.checks
        await assertThrowsAsync(.postQuantumRequired) { try await alice.manager.processBundle(oldClassicBundle, for: bob.address) }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before)
        let checksAfter = await alice.trust.checks
        XCTAssertEqual(checksAfter, checks, "refused before the trust evaluator is asked")

        // After a restart (a new manager over the stored record, and the record's own blob).
        let restarted = SessionManager(store: alice.store, trust: alice.trust, localAddress: alice.address, kem: kem, clock: clock)
        await assertThrowsAsync(.postQuantumRequired) { try await restarted.processBundle(oldClassicBundle, for: bob.address) }
        let stored = await alice.base.loadSession(for: bob.address)
        var record = try SessionRecord(serialized: try XCTUnwrap(stored).serialized())
        XCTAssertTrue(record.requiresPostQuantum)
        let classicSession = try SessionState(
            initiatingWith: oldClassicBundle, identity: alice.identity, localAddress: alice.address, remoteAddress: bob.address,
            kem: kem)
        XCTAssertThrowsError(try record.promote(classicSession)) { XCTAssertEqual($0 as? SessionError, .postQuantumRequired) }
        // A new bundle with a KEM prekey is fine; so is the pinned session, which keeps working.
        try await alice.startSession(with: bob.address, server: server)
        let again = try await alice.manager.encrypt(utf8("still pq"), to: bob.address)
        let received3 = try await upgradedBob.decrypt(again, from: alice.address)
        XCTAssertEqual(received3.plaintext, utf8("still pq"))

        // Deleting the device's record (the app knows it lost its KEM) clears the pin.
        try await alice.store.deleteSession(for: bob.address)
        let cleared = try await alice.manager.requiresPostQuantum(for: bob.address)
        XCTAssertFalse(cleared)
        try await alice.manager.processBundle(oldClassicBundle, for: bob.address)
        let classicAgain = try await alice.manager.isPostQuantum(sessionWith: bob.address)
        XCTAssertFalse(classicAgain)
    }

    // MARK: The responder's window for classic prekey messages

    /// Bob had classic prekeys and gains a KEM: his signed prekey rotates to a `kem` = 1 one.
    /// Classic prekey messages built from his old classic bundle still create sessions during
    /// the in-flight window (7 days by default), not after it (before this change: for the
    /// whole 30-day grace period), unless a migration allows classic sessions. Messages of a
    /// session that already exists are not affected.
    func testClassicPrekeyMessagesToTheOldClassicSignedPrekeyAreRefusedAfterTheWindow() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let clock = FakeClock()
        let random = SeededRandomSource(seed: 8040)
        let identity = try IdentityKeyPair(using: random)
        let classic = try LocalPreKeys(identity: identity, now: clock.now(), random: random)
        let bob = try await TestDevice("bob", 1, seed: 8041, server: server, clock: clock, identity: identity, kem: kem,
                                       preKeys: classic, publish: false)
        clock.advance(bySeconds: 3600)
        let switched = clock.now()
        let rotation = try await bob.manager.maintainPreKeys()
        XCTAssertEqual(rotation.signedPreKey?.signsKEMPreKeys, true)
        func classicBundle(_ oneTimePreKeyID: UInt32) throws -> PreKeyBundle {
            try XCTUnwrap(classic.bundle(identityKey: identity.publicKey, oneTimePreKeyID: oneTimePreKeyID))
        }
        func classicSender(_ name: String, _ seed: UInt64, _ oneTimePreKeyID: UInt32) async throws -> (TestDevice, [UInt8]) {
            let sender = try await TestDevice(name, 1, seed: seed, server: server, clock: clock)
            try await sender.manager.processBundle(try classicBundle(oneTimePreKeyID), for: bob.address)
            return (sender, try await sender.manager.encrypt(utf8("from \(name)"), to: bob.address))
        }

        clock.set(switched.adding(seconds: Days.seconds(1)))
        let (alice, first) = try await classicSender("alice", 8042, 3)
        let received4 = try await bob.manager.decrypt(first, from: alice.address)
        XCTAssertEqual(received4.plaintext, utf8("from alice"))

        clock.set(switched.adding(seconds: Days.seconds(7) - 1))
        let (carol, lastInWindow) = try await classicSender("carol", 8043, 4)
        let received5 = try await bob.manager.decrypt(lastInWindow, from: carol.address)
        XCTAssertEqual(received5.plaintext, utf8("from carol"))

        clock.set(switched.adding(seconds: Days.seconds(7)))
        let (dave, late) = try await classicSender("dave", 8044, 5)
        let before = await bob.snapshot()
        await assertThrowsAsync(.postQuantumRequired) { try await bob.manager.decrypt(late, from: dave.address) }
        let after = await bob.snapshot()
        XCTAssertEqual(after, before, "no session, no one-time prekey consumed, no EK_A recorded")
        let keys = try await bob.storedPreKeys()
        XCTAssertNotNil(keys.signedPreKey(id: 1), "the classic signed prekey is still held (grace period: 30 days)")

        // Alice's session exists: her next prekey message (no reply yet) still decrypts.
        let second = try await alice.manager.encrypt(utf8("again"), to: bob.address)
        XCTAssertEqual(second.first, 0x22)
        let received6 = try await bob.manager.decrypt(second, from: alice.address)
        XCTAssertEqual(received6.plaintext, utf8("again"))

        // A manager configured for a migration accepts it (as it accepts classic messages to
        // kem = 1 signed prekeys); a longer window too.
        let migration = try SessionConfiguration(allowsClassicSessionsDuringMigration: true)
        let migrating = SessionManager(store: bob.store, trust: bob.trust, localAddress: bob.address, kem: kem,
                                       configuration: migration, clock: clock, random: bob.random)
        let received7 = try await migrating.decrypt(late, from: dave.address)
        XCTAssertEqual(received7.plaintext, utf8("from dave"))
        let (erin, other) = try await classicSender("erin", 8045, 6)
        let longer = try PreKeyPolicy(classicPreKeyMessageWindow: Days.seconds(10))
        let patient = SessionManager(store: bob.store, trust: bob.trust, localAddress: bob.address, kem: kem, preKeyPolicy: longer,
                                     clock: clock, random: bob.random)
        let received8 = try await patient.decrypt(other, from: erin.address)
        XCTAssertEqual(received8.plaintext, utf8("from erin"))
    }

    func testTheWindowStartsAtTheFirstKEMSignedPrekeyNewerThanTheClassicOne() throws {
        let kem = try mlkem()
        let random = SeededRandomSource(seed: 8050)
        let identity = try IdentityKeyPair(using: random)
        let start = Timestamp(secondsSince1970: 1_700_000_000)
        let day = Days.seconds(1)
        var keys = try LocalPreKeys(identity: identity, now: start, random: random)                      // 1: classic
        try keys.rotateSignedPreKey(identity: identity, now: start.adding(seconds: day), random: random)  // 2: classic
        try keys.rotateSignedPreKey(identity: identity, now: start.adding(seconds: 2 * day), kem: kem, random: random)  // 3: kem
        try keys.rotateSignedPreKey(identity: identity, now: start.adding(seconds: 3 * day), kem: kem, random: random)  // 4: kem
        let policy = PreKeyPolicy.default
        XCTAssertEqual(policy.classicPreKeyMessageWindow, 7 * 24 * 3600)
        let windowEnd = start.adding(seconds: 2 * day + policy.classicPreKeyMessageWindow)
        for id: UInt32 in [1, 2] {
            XCTAssertFalse(keys.refusesClassicPreKeyMessages(signedPreKeyID: id, now: windowEnd.adding(seconds: -1), policy: policy))
            XCTAssertTrue(keys.refusesClassicPreKeyMessages(signedPreKeyID: id, now: windowEnd, policy: policy), "key \(id)")
        }
        for id: UInt32 in [3, 4, 99] {
            XCTAssertFalse(keys.refusesClassicPreKeyMessages(signedPreKeyID: id, now: windowEnd.adding(seconds: 100 * day), policy: policy),
                           "kem = 1 keys (the stripped-KEM rule) and keys not held")
        }
        // A device that lost its KEM again: its new classic key is current and accepted.
        try keys.rotateSignedPreKey(identity: identity, now: start.adding(seconds: 4 * day), random: random)   // 5: classic
        XCTAssertFalse(keys.refusesClassicPreKeyMessages(signedPreKeyID: 5, now: start.adding(seconds: 100 * day), policy: policy))
        // A clock that went backwards never refuses early.
        XCTAssertFalse(keys.refusesClassicPreKeyMessages(signedPreKeyID: 1, now: start, policy: policy))
        XCTAssertThrowsError(try PreKeyPolicy(classicPreKeyMessageWindow: -1)) {
            XCTAssertEqual($0 as? SessionError, .invalidConfiguration("classicPreKeyMessageWindow must not be negative"))
        }
        XCTAssertNoThrow(try PreKeyPolicy(classicPreKeyMessageWindow: 0))
    }
}
