import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// `SessionManager` end to end: bundles, fan-out to devices, persistence only on success,
/// one-time prekeys consumed once, trust decisions, prekey upkeep over time, group helpers.
final class SessionManagerTests: XCTestCase {
    // MARK: Conversations

    func testAliceAndBobTalkThroughTheirManagers() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 1, server: server)
        let bob = try await TestDevice("bob", 1, seed: 2, server: server)
        let published = await server.oneTimePreKeyCount(for: bob.address)
        XCTAssertEqual(published, 50)

        try await alice.startSession(with: bob.address, server: server)
        let remaining = await server.oneTimePreKeyCount(for: bob.address)
        XCTAssertEqual(remaining, 49)
        let first = try await alice.manager.encrypt(utf8("hello bob"), to: bob.address)
        XCTAssertEqual(first.first, WireType.preKeyMessage)
        let received = try await bob.manager.decrypt(first, from: alice.address).plaintext
        XCTAssertEqual(received, utf8("hello bob"))
        let bobKeys = await bob.base.loadPreKeys()
        XCTAssertEqual(bobKeys?.oneTimePreKeyCount, 49, "the one-time prekey was consumed with the session's creation")
        XCTAssertNil(bobKeys?.oneTimePreKey(id: 1))

        for round in 0 ..< 5 {
            let reply = try await bob.manager.encrypt(plaintext(round), to: alice.address)
            XCTAssertEqual(reply.first, WireType.ratchetMessage)
            let atAlice = try await alice.manager.decrypt(reply, from: bob.address).plaintext
            XCTAssertEqual(atAlice, plaintext(round))
            let next = try await alice.manager.encrypt(plaintext(100 + round), to: bob.address)
            XCTAssertEqual(next.first, WireType.ratchetMessage, "after a reply Alice sends ratchet messages")
            let atBob = try await bob.manager.decrypt(next, from: alice.address).plaintext
            XCTAssertEqual(atBob, plaintext(100 + round))
        }
    }

    func testAMessageIsDecryptedOnceAndItsReplayChangesNothing() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 3, server: server)
        let bob = try await TestDevice("bob", 1, seed: 4, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("once"), to: bob.address)
        _ = try await bob.manager.decrypt(message, from: alice.address)
        let before = await bob.snapshot()
        await assertThrowsAsync(.duplicateMessage) { try await bob.manager.decrypt(message, from: alice.address) }
        let after = await bob.snapshot()
        XCTAssertEqual(after, before)
    }

    func testEncryptingToAUserFansOutToEachDeviceWithASession() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 5, server: server)
        var bobs: [TestDevice] = []
        for device: UInt32 in [3, 1, 2] { bobs.append(try await TestDevice("bob", device, seed: 10 + UInt64(device), server: server)) }
        let bobEve = try await TestDevice("bobby", 1, seed: 20, server: server)
        for bob in bobs + [bobEve] { try await alice.startSession(with: bob.address, server: server) }

        let outcomes = try await alice.manager.encrypt(utf8("to every bob device"), toUser: "bob")
        XCTAssertEqual(outcomes.map(\.address.deviceID), [1, 2, 3], "one outcome per device, ascending; bobby is another user")
        for outcome in outcomes {
            // Another device holds prekeys with the same ids but other keys: X3DH disagrees.
            let other = try XCTUnwrap(bobs.first { $0.address != outcome.address })
            await assertThrowsAsync(.invalidMessage) { try await other.manager.decrypt(try XCTUnwrap(outcome.ciphertext), from: alice.address) }
        }
        for outcome in outcomes {
            let bob = try XCTUnwrap(bobs.first { $0.address == outcome.address })
            let received = try await bob.manager.decrypt(try XCTUnwrap(outcome.ciphertext), from: alice.address).plaintext
            XCTAssertEqual(received, utf8("to every bob device"))
        }
        let none = try await alice.manager.encrypt(utf8("nobody"), toUser: "carol")
        XCTAssertTrue(none.isEmpty)
    }

    func testOneDeviceFailingInAFanOutLeavesItsSessionUnchangedAndTheOthersProceed() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 6, server: server)
        let bob1 = try await TestDevice("bob", 1, seed: 7, server: server)
        let bob2 = try await TestDevice("bob", 2, seed: 8, server: server)
        try await alice.startSession(with: bob1.address, server: server)
        try await alice.startSession(with: bob2.address, server: server)
        // Bob's device 2 reinstalls with a new identity; Alice learns its key from a message.
        let bob2New = try await TestDevice("bob", 2, seed: 9, server: server)
        try await bob2New.startSession(with: alice.address, server: server)
        let fromNewBob2 = try await bob2New.manager.encrypt(utf8("new phone"), to: alice.address)
        let received = try await alice.manager.decrypt(fromNewBob2, from: bob2.address).plaintext
        XCTAssertEqual(received, utf8("new phone"), "a changed identity still decrypts")

        let before = await alice.snapshot()
        let outcomes = try await alice.manager.encrypt(utf8("hi"), toUser: "bob")
        XCTAssertEqual(outcomes.map(\.address.deviceID), [1, 2])
        XCTAssertNotNil(outcomes[0].ciphertext)
        XCTAssertEqual(outcomes[1].error, .untrustedIdentity)
        let after = await alice.snapshot()
        XCTAssertEqual(after.records[bob2.address.description], before.records[bob2.address.description], "the refused device is unchanged")
        XCTAssertNotEqual(after.records[bob1.address.description], before.records[bob1.address.description], "the other device advanced")
        let atBob1 = try await bob1.manager.decrypt(try XCTUnwrap(outcomes[0].ciphertext), from: alice.address).plaintext
        XCTAssertEqual(atBob1, utf8("hi"))

        await alice.trust.accept(bob2.address)
        let retried = try await alice.manager.encrypt(utf8("hi again"), to: bob2.address)
        let atNewBob2 = try await bob2New.manager.decrypt(retried, from: alice.address).plaintext
        XCTAssertEqual(atNewBob2, utf8("hi again"))
    }

    // MARK: Persistence only on success

    func testAStoreFailureDuringDecryptChangesNothingAndTheSameBytesDecryptOnRetry() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 30, server: server)
        let bob = try await TestDevice("bob", 1, seed: 31, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let preKeyMessage = try await alice.manager.encrypt(utf8("first"), to: bob.address)

        await bob.store.setFailWrites(true)
        let before = await bob.snapshot()
        await assertThrowsAsync(.storage("injected write failure")) { try await bob.manager.decrypt(preKeyMessage, from: alice.address) }
        let afterFailure = await bob.snapshot()
        XCTAssertEqual(afterFailure, before, "no session stored, no one-time prekey consumed")

        await bob.store.setFailWrites(false)
        let retried = try await bob.manager.decrypt(preKeyMessage, from: alice.address).plaintext
        XCTAssertEqual(retried, utf8("first"))
        let keys = await bob.base.loadPreKeys()
        XCTAssertEqual(keys?.oneTimePreKeyCount, 49)

        // The same for a ratchet message.
        let reply = try await bob.manager.encrypt(utf8("reply"), to: alice.address)
        _ = try await alice.manager.decrypt(reply, from: bob.address)
        let ratchetMessage = try await alice.manager.encrypt(utf8("second"), to: bob.address)
        await bob.store.setFailWrites(true)
        let beforeRatchet = await bob.snapshot()
        await assertThrowsAsync(.storage("injected write failure")) { try await bob.manager.decrypt(ratchetMessage, from: alice.address) }
        let afterRatchetFailure = await bob.snapshot()
        XCTAssertEqual(afterRatchetFailure, beforeRatchet)
        await bob.store.setFailWrites(false)
        let second = try await bob.manager.decrypt(ratchetMessage, from: alice.address).plaintext
        XCTAssertEqual(second, utf8("second"))
    }

    func testAStoreFailureDuringEncryptReturnsNoMessageAndReusesNoKey() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 32, server: server)
        let bob = try await TestDevice("bob", 1, seed: 33, server: server)
        try await alice.startSession(with: bob.address, server: server)
        await alice.store.setFailWrites(true)
        let before = await alice.snapshot()
        await assertThrowsAsync(.storage("injected write failure")) { try await alice.manager.encrypt(utf8("lost"), to: bob.address) }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before)
        await alice.store.setFailWrites(false)
        let message = try await alice.manager.encrypt(utf8("kept"), to: bob.address)
        let received = try await bob.manager.decrypt(message, from: alice.address).plaintext
        XCTAssertEqual(received, utf8("kept"))
    }

    func testEveryOtherCallThatFailsToWriteChangesNothing() async throws {
        let server = FakeServer()
        let group = groupID("g")
        let alice = try await TestDevice("alice", 1, seed: 36, server: server)
        let bob = try await TestDevice("bob", 1, seed: 37, server: server)
        try await makeGroup(group, of: [alice, bob])
        let fetched = await server.bundle(for: bob.address)
        let bundle = try XCTUnwrap(fetched)
        let distribution = try SenderKeySendingChain(group: group, sender: bob.address, using: SeededRandomSource(seed: 38))
            .distributionMessage().serialized
        await alice.store.setFailWrites(true)
        let before = await alice.snapshot(groups: [group], senders: [bob.address])
        let attemptsBefore = await alice.store.writeAttempts
        let failed = "injected write failure"
        await assertThrowsAsync(.storage(failed)) { try await alice.manager.processBundle(bundle, for: bob.address) }
        await assertThrowsAsync(.storage(failed)) { try await alice.manager.maintainPreKeys() }
        await assertThrowsAsync(.storage(failed)) { try await alice.manager.senderKeyDistributionMessage(for: group) }
        await assertThrowsAsync(.storage(failed)) { try await alice.manager.rotateSenderKey(for: group) }
        await assertThrowsAsync(.storage(failed)) { try await alice.manager.processSenderKeyDistribution(distribution, for: group, from: bob.address) }
        let after = await alice.snapshot(groups: [group], senders: [bob.address])
        XCTAssertEqual(after, before)
        let attempts = await alice.store.writeAttempts
        XCTAssertEqual(attempts - attemptsBefore, 5, "each call reached its one write")

        await alice.store.setFailWrites(false)
        try await alice.manager.processBundle(bundle, for: bob.address)
        let message = try await alice.manager.encrypt(utf8("after the outage"), to: bob.address)
        let received = try await bob.manager.decrypt(message, from: alice.address).plaintext
        XCTAssertEqual(received, utf8("after the outage"))
    }

    func testATrustEvaluatorFailureChangesNothing() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 34, server: server)
        let bob = try await TestDevice("bob", 1, seed: 35, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("first"), to: bob.address)
        await bob.trust.setFailing(true)
        let before = await bob.snapshot()
        do {
            _ = try await bob.manager.decrypt(message, from: alice.address)
            XCTFail("expected a storage error")
        } catch {
            guard case .storage = error else { return XCTFail("unexpected \(error)") }
        }
        let after = await bob.snapshot()
        XCTAssertEqual(after, before)
        await bob.trust.setFailing(false)
        let received = try await bob.manager.decrypt(message, from: alice.address).plaintext
        XCTAssertEqual(received, utf8("first"))
    }

    // MARK: One-time prekeys

    func testAOneTimePreKeyCreatesOneSessionEvenWhenTwoPrekeyMessagesNamingItAreDecryptedConcurrently() async throws {
        let server = FakeServer()
        let bob = try await TestDevice("bob", 1, seed: 40, server: server)
        let alice = try await TestDevice("alice", 1, seed: 41, server: server)
        let carol = try await TestDevice("carol", 1, seed: 42, server: server)
        // A misbehaving server hands the same one-time prekey to Alice and Carol.
        let aliceBundle = await server.bundle(for: bob.address, consumingOneTimePreKey: false)
        let carolBundle = await server.bundle(for: bob.address, consumingOneTimePreKey: false)
        XCTAssertEqual(aliceBundle?.oneTimePreKey?.id, carolBundle?.oneTimePreKey?.id)
        try await alice.manager.processBundle(try XCTUnwrap(aliceBundle), for: bob.address)
        try await carol.manager.processBundle(try XCTUnwrap(carolBundle), for: bob.address)
        let fromAlice = try await alice.manager.encrypt(utf8("from alice"), to: bob.address)
        let fromCarol = try await carol.manager.encrypt(utf8("from carol"), to: bob.address)

        // Both decryptions run at once, with every store call yielding. X3DH runs hold Bob's
        // prekeys lock from the lookup to the commit, so the second one finds the one-time
        // prekey gone before it decrypts: its processing step never sees a plaintext.
        await bob.store.setYields(true)
        let processed = Counter()
        let process = { @Sendable (_: DecryptedMessage) async throws(SessionError) in await processed.increment() }
        async let aliceResult = capture { () async throws(SessionError) -> [UInt8] in
            try await bob.manager.decrypt(fromAlice, from: alice.address, beforePersisting: process).plaintext
        }
        async let carolResult = capture { () async throws(SessionError) -> [UInt8] in
            try await bob.manager.decrypt(fromCarol, from: carol.address, beforePersisting: process).plaintext
        }
        let results = await [aliceResult, carolResult]
        let processedCount = await processed.value
        XCTAssertEqual(processedCount, 1, "the loser's processing step never ran")
        let successes = results.compactMap { try? $0.get() }
        let failures = results.compactMap { result -> SessionError? in
            if case let .failure(error) = result { return error }
            return nil
        }
        XCTAssertEqual(successes.count, 1, "exactly one prekey message creates a session")
        XCTAssertEqual(failures, [.unknownPreKey])
        let keys = await bob.base.loadPreKeys()
        XCTAssertNil(keys?.oneTimePreKey(id: try XCTUnwrap(aliceBundle?.oneTimePreKey?.id)))
        XCTAssertEqual(keys?.oneTimePreKeyCount, 49)
        let addresses = await bob.base.addresses()
        XCTAssertEqual(addresses.count, 1, "only the winner's session is stored")

        // The loser cannot win later either.
        let loser = successes.first == utf8("from alice") ? (carol, fromCarol) : (alice, fromAlice)
        await assertThrowsAsync(.unknownPreKey) { try await bob.manager.decrypt(loser.1, from: loser.0.address) }
    }

    // MARK: Trust

    func testABundleWithAChangedIdentityIsRefusedUntilTheAppAcceptsIt() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 50, server: server)
        let bob = try await TestDevice("bob", 1, seed: 51, server: server)
        try await alice.startSession(with: bob.address, server: server)
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("hi"), to: bob.address), from: alice.address)

        let newBob = try await TestDevice("bob", 1, seed: 52, server: server)
        let fetched = await server.bundle(for: bob.address)
        let newBundle = try XCTUnwrap(fetched)
        XCTAssertEqual(newBundle.identityKey, newBob.identity.publicKey)
        let before = await alice.snapshot()
        await assertThrowsAsync(.untrustedIdentity) { try await alice.manager.processBundle(newBundle, for: bob.address) }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before, "nothing stored for a refused bundle")
        let recorded = await alice.trust.key(for: bob.address)
        XCTAssertEqual(recorded, bob.identity.publicKey, "a refused bundle records nothing")
        // The genuine session still sends.
        _ = try await alice.manager.encrypt(utf8("still you?"), to: bob.address)

        // The app accepts the new key (records it and accepts the change), then retries.
        let observed = try await alice.trust.recordIdentity(newBob.identity.publicKey, for: bob.address)
        XCTAssertEqual(observed, .changed(previous: bob.identity.publicKey))
        await alice.trust.accept(bob.address)
        try await alice.manager.processBundle(newBundle, for: bob.address)
        let message = try await alice.manager.encrypt(utf8("hello new bob"), to: bob.address)
        let received = try await newBob.manager.decrypt(message, from: alice.address).plaintext
        XCTAssertEqual(received, utf8("hello new bob"))
    }

    /// Checking trust never writes: a message that decrypts but whose processing step fails
    /// records nothing; the retry that succeeds records the first use.
    func testAFailedDecryptRecordsNothingInTheTrustStore() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 58, server: server)
        let bob = try await TestDevice("bob", 1, seed: 59, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("hi"), to: bob.address)
        await assertThrowsAsync(.storage("the app's database is full")) {
            try await bob.manager.decrypt(message, from: alice.address, beforePersisting: { (_: DecryptedMessage) async throws(SessionError) in
                throw .storage("the app's database is full")
            })
        }
        let unrecorded = await bob.trust.key(for: alice.address)
        XCTAssertNil(unrecorded, "nothing recorded for a failed call")
        let recordsBefore = await bob.trust.records
        XCTAssertEqual(recordsBefore, 0)
        let received = try await bob.manager.decrypt(message, from: alice.address)
        XCTAssertEqual(received.identityObservation, .firstUse)
        let recorded = await bob.trust.key(for: alice.address)
        XCTAssertEqual(recorded, alice.identity.publicKey)
        // Later messages on the same key evaluate as unchanged and record nothing more.
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("again"), to: bob.address), from: alice.address)
        let recordsAfter = await bob.trust.records
        XCTAssertEqual(recordsAfter, 1)
    }

    /// A `beforePersisting` step that calls back into the manager would wait for the lock its
    /// own task holds: it throws `reentrantCall` instead, the outer call fails with it, nothing
    /// is stored, and the same bytes decrypt afterwards.
    func testAProcessingStepThatCallsBackIntoTheManagerThrowsInsteadOfDeadlocking() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 60, server: server)
        let bob = try await TestDevice("bob", 1, seed: 61, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("hi"), to: bob.address)
        let manager = bob.manager
        let aliceAddress = alice.address
        let before = await bob.snapshot()
        await assertThrowsAsync(.reentrantCall) {
            try await manager.decrypt(message, from: aliceAddress, beforePersisting: { (_: DecryptedMessage) async throws(SessionError) in
                _ = try await manager.encrypt(utf8("reply from inside"), to: aliceAddress)
            })
        }
        // Another peer or a group from inside the step is refused too: locks are taken in one
        // order only, by the manager itself.
        let group = groupID("club")
        await assertThrowsAsync(.reentrantCall) {
            try await manager.decrypt(message, from: aliceAddress, beforePersisting: { (_: DecryptedMessage) async throws(SessionError) in
                _ = try await manager.groupEncrypt(utf8("x"), for: group)
            })
        }
        let after = await bob.snapshot()
        XCTAssertEqual(after, before, "nothing stored")
        let received = try await manager.decrypt(message, from: aliceAddress)
        XCTAssertEqual(received.plaintext, utf8("hi"))
        // Outside any call, the same manager calls work as usual.
        _ = try await manager.encrypt(utf8("reply"), to: aliceAddress)
    }

    func testAForgedBundleIsRejectedBeforeTheTrustEvaluatorSeesIt() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 53, server: server)
        let bob = try await TestDevice("bob", 1, seed: 54, server: server)
        let fetched = await server.bundle(for: bob.address)
        let bundle = try XCTUnwrap(fetched)
        let forged = try PreKeyBundle(
            identityKey: bundle.identityKey, signedPreKeyID: bundle.signedPreKeyID, signedPreKey: bundle.signedPreKey,
            signedPreKeySignature: flipped(bundle.signedPreKeySignature, at: 3), oneTimePreKey: bundle.oneTimePreKey)
        await assertThrowsAsync(.invalidSignature) { try await alice.manager.processBundle(forged, for: bob.address) }
        let checks = await alice.trust.checks
        XCTAssertEqual(checks, 0)
        let known = await alice.trust.key(for: bob.address)
        XCTAssertNil(known)
    }

    func testAMessageFromAChangedIdentityDecryptsButRepliesWaitForAcceptance() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 55, server: server)
        let bob = try await TestDevice("bob", 1, seed: 56, server: server)
        try await alice.startSession(with: bob.address, server: server)
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("hi"), to: bob.address), from: alice.address)

        let newAlice = try await TestDevice("alice", 1, seed: 57, server: server)
        try await newAlice.startSession(with: bob.address, server: server)
        let fromNewAlice = try await newAlice.manager.encrypt(utf8("I reinstalled"), to: bob.address)
        let received = try await bob.manager.decrypt(fromNewAlice, from: alice.address).plaintext
        XCTAssertEqual(received, utf8("I reinstalled"))
        let recorded = await bob.trust.key(for: alice.address)
        XCTAssertEqual(recorded, newAlice.identity.publicKey, "the new key was reported")

        await assertThrowsAsync(.untrustedIdentity) { try await bob.manager.encrypt(utf8("who are you?"), to: alice.address) }
        await bob.trust.accept(alice.address)
        let reply = try await bob.manager.encrypt(utf8("welcome back"), to: alice.address)
        let atNewAlice = try await newAlice.manager.decrypt(reply, from: bob.address).plaintext
        XCTAssertEqual(atNewAlice, utf8("welcome back"))
    }

    // MARK: Prekeys over time

    func testAMessageToTheReplacedSignedPreKeyDecryptsDuringTheGracePeriodAndFailsAfter() async throws {
        let server = FakeServer()
        let clock = FakeClock()
        let bob = try await TestDevice("bob", 1, seed: 60, server: server, clock: clock)
        let alice = try await TestDevice("alice", 1, seed: 61, server: server)
        let carol = try await TestDevice("carol", 1, seed: 62, server: server)
        // Both fetch a bundle with signed prekey 1 (Carol's without a one-time prekey).
        try await alice.startSession(with: bob.address, server: server)
        let fetched = await server.bundle(for: bob.address)
        let carolBundle = try XCTUnwrap(fetched)
        try await carol.manager.processBundle(
            try PreKeyBundle(
                identityKey: carolBundle.identityKey, signedPreKeyID: carolBundle.signedPreKeyID,
                signedPreKey: carolBundle.signedPreKey, signedPreKeySignature: carolBundle.signedPreKeySignature,
                oneTimePreKey: nil),
            for: bob.address)
        let fromAlice = try await alice.manager.encrypt(utf8("sent before the rotation"), to: bob.address)
        let fromCarol = try await carol.manager.encrypt(utf8("arrives too late"), to: bob.address)

        clock.advance(bySeconds: Days.seconds(7) - 1)
        let early = try await bob.manager.maintainPreKeys()
        XCTAssertTrue(early.isEmpty, "not due before 7 days")
        clock.advance(bySeconds: 1)
        let rotation = try await bob.manager.maintainPreKeys()
        XCTAssertEqual(rotation.signedPreKey?.id, 2)
        await server.publish(rotation, for: bob.address)

        clock.advance(bySeconds: Days.seconds(30) - 1)
        let overdue = try await bob.manager.maintainPreKeys()
        XCTAssertEqual(overdue.signedPreKey?.id, 3, "overdue: rotated once more, signed prekey 2 retired now")
        let keys = await bob.base.loadPreKeys()
        XCTAssertNotNil(keys?.signedPreKey(id: 1), "29 days, 23:59:59 after its replacement")
        let received = try await bob.manager.decrypt(fromAlice, from: alice.address).plaintext
        XCTAssertEqual(received, utf8("sent before the rotation"))

        clock.advance(bySeconds: 1)
        _ = try await bob.manager.maintainPreKeys()
        let expired = await bob.base.loadPreKeys()
        XCTAssertNil(expired?.signedPreKey(id: 1), "removed 30 days after its replacement")
        let before = await bob.snapshot()
        await assertThrowsAsync(.unknownPreKey) { try await bob.manager.decrypt(fromCarol, from: carol.address) }
        let after = await bob.snapshot()
        XCTAssertEqual(after, before)
    }

    func testOneTimePreKeysAreReplenishedOnceFewerThanTheLowWaterMarkRemain() async throws {
        let server = FakeServer()
        let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 5, oneTimePreKeyLowWaterMark: 2)
        let bob = try await TestDevice("bob", 1, seed: 70, server: server, policy: policy)
        var senders: [TestDevice] = []
        for index in 0 ..< 4 {
            let sender = try await TestDevice("sender\(index)", 1, seed: 71 + UInt64(index), server: server)
            try await sender.startSession(with: bob.address, server: server)
            _ = try await bob.manager.decrypt(try await sender.manager.encrypt([UInt8(index)], to: bob.address), from: sender.address)
            senders.append(sender)
            let upload = try await bob.manager.maintainPreKeys()
            // Held after each: 4, 3, 2 (no upload), then 1 < 2: topped up to 5 with ids 6…9.
            if index < 3 {
                XCTAssertTrue(upload.isEmpty, "\(5 - index - 1) held")
            } else {
                XCTAssertEqual(upload.oneTimePreKeys.map(\.id), [6, 7, 8, 9])
                await server.publish(upload, for: bob.address)
            }
        }
        let keys = await bob.base.loadPreKeys()
        XCTAssertEqual(keys?.oneTimePreKeys.map(\.id), [5, 6, 7, 8, 9])
        let onServer = await server.oneTimePreKeyCount(for: bob.address)
        XCTAssertEqual(onServer, 5)
    }

    // MARK: Groups

    func testGroupMessagesThroughTheManagers() async throws {
        let server = FakeServer()
        let group = groupID("book club")
        let alice = try await TestDevice("alice", 1, seed: 80, server: server)
        let bob = try await TestDevice("bob", 1, seed: 81, server: server)
        let carol = try await TestDevice("carol", 1, seed: 82, server: server)
        try await makeGroup(group, of: [alice, bob, carol])
        for member in [bob, carol] { try await alice.startSession(with: member.address, server: server) }

        await assertThrowsAsync(.noSession) { try await alice.manager.groupEncrypt(utf8("too early"), for: group) }
        let outcomes = try await alice.manager.distributeSenderKey(for: group, to: [bob.address, carol.address])
        XCTAssertEqual(outcomes.map(\.address), [bob.address, carol.address])
        for (member, outcome) in zip([bob, carol], outcomes) {
            try await member.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(outcome.ciphertext), for: group, from: alice.address)
        }
        let message = try await alice.manager.groupEncrypt(utf8("chapter 1"), for: group)
        for member in [bob, carol] {
            let received = try await member.manager.groupDecrypt(message, for: group, from: alice.address)
            XCTAssertEqual(received, utf8("chapter 1"))
        }
        await assertThrowsAsync(.duplicateMessage) { try await bob.manager.groupDecrypt(message, for: group, from: alice.address) }
        // Re-attributed to another member: the chain is held from Alice, so it is dropped, not kept.
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.groupDecrypt(message, for: group, from: carol.address) }
        // Relabelled to a group Alice is not a member of (on Bob's device).
        await assertThrowsAsync(.notAGroupMember) { try await bob.manager.groupDecrypt(message, for: groupID("other"), from: alice.address) }

        // A store failure leaves the chain where it was; the same bytes decrypt on retry.
        let second = try await alice.manager.groupEncrypt(utf8("chapter 2"), for: group)
        await carol.store.setFailWrites(true)
        let before = await carol.snapshot(groups: [group], senders: [alice.address])
        await assertThrowsAsync(.storage("injected write failure")) { try await carol.manager.groupDecrypt(second, for: group, from: alice.address) }
        let after = await carol.snapshot(groups: [group], senders: [alice.address])
        XCTAssertEqual(after, before)
        await carol.store.setFailWrites(false)
        let retried = try await carol.manager.groupDecrypt(second, for: group, from: alice.address)
        XCTAssertEqual(retried, utf8("chapter 2"))

        // Rotation after Carol leaves: Bob reads the new chain, Carol cannot.
        let rotated = try await alice.manager.rotateSenderKey(for: group)
        // Its bytes sent as an ordinary message are application content, which is not a
        // distribution (SPEC §2 content types): refused, nothing stored.
        let asMessage = try await alice.manager.encrypt(rotated.serialized, to: bob.address)
        await assertThrowsAsync(.invalidPadding) {
            try await bob.manager.processSenderKeyDistribution(encrypted: asMessage, for: group, from: alice.address)
        }
        // distributeSenderKey sends the current (rotated) chain as a distribution.
        let redistributed = try await alice.manager.distributeSenderKey(for: group, to: [bob.address])
        let pairwise = try XCTUnwrap(redistributed.first?.ciphertext)
        try await bob.manager.processSenderKeyDistribution(encrypted: pairwise, for: group, from: alice.address)
        let third = try await alice.manager.groupEncrypt(utf8("chapter 3"), for: group)
        let atBob = try await bob.manager.groupDecrypt(third, for: group, from: alice.address)
        XCTAssertEqual(atBob, utf8("chapter 3"))
        await assertThrowsAsync(.unknownChain) { try await carol.manager.groupDecrypt(third, for: group, from: alice.address) }
    }
}

/// A count shared between tasks.
private actor Counter {
    private(set) var value = 0
    func increment() { value += 1 }
}
