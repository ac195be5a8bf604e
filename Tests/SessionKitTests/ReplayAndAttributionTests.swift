import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// SPEC §3's EK_A replay record and address binding, and the identity observation that
/// `SessionManager.decrypt` reports.
final class ReplayAndAttributionTests: XCTestCase {
    /// Bob's published bundle without its one-time prekey (the server ran out).
    private func bundleWithoutOneTimePreKey(of device: TestDevice, server: FakeServer) async throws -> PreKeyBundle {
        let fetched = try await server.requireBundle(for: device.address)
        return try PreKeyBundle(identityKey: fetched.identityKey, signedPreKeyID: fetched.signedPreKeyID,
                                signedPreKey: fetched.signedPreKey, signedPreKeySignature: fetched.signedPreKeySignature,
                                oneTimePreKey: nil, kemPreKey: fetched.kemPreKey)
    }

    // MARK: EK_A replay record

    func testAPrekeyMessageWithoutAOneTimePrekeyIsADuplicateOnceItsSessionIsGone() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 2001, server: server)
        let bob = try await TestDevice("bob", 1, seed: 2002, server: server)
        try await alice.manager.processBundle(try await bundleWithoutOneTimePreKey(of: bob, server: server), for: bob.address)
        let first = try await alice.manager.encrypt(utf8("once"), to: bob.address)
        let second = try await alice.manager.encrypt(utf8("twice"), to: bob.address)
        XCTAssertEqual(first[69] & 0x03, 0x00, "no one-time prekey: nothing but the EK_A record stops a replay")
        let prefix = try PreKeyMessage(serialized: first).prefix
        let received = try await bob.manager.decrypt(first, from: alice.address)
        XCTAssertEqual(received.plaintext, utf8("once"))
        let keys = try await bob.storedPreKeys()
        let recorded = try await bob.store.hasRecordedBaseKey(prefix.baseKey, signedPreKeyID: prefix.signedPreKeyID)
        XCTAssertTrue(recorded)
        XCTAssertEqual(keys.currentSignedPreKey.recordedBaseKeyCount, 1)

        // While the session exists, the session (not the record) takes its prekey messages.
        let secondReceived = try await bob.manager.decrypt(second, from: alice.address)
        XCTAssertEqual(secondReceived.plaintext, utf8("twice"))
        XCTAssertFalse(secondReceived.establishedSession)

        // The app deletes the conversation; the server (or an attacker) replays the prekey messages.
        try await bob.store.deleteSession(for: alice.address)
        let third = try await alice.manager.encrypt(utf8("never delivered before"), to: bob.address)
        let before = await bob.snapshot()
        for (message, what) in [(first, "the first"), (second, "the second"), (third, "a new message of the same session")] {
            await assertThrowsAsync(.duplicateMessage) { try await bob.manager.decrypt(message, from: alice.address) }
            let after = await bob.snapshot()
            XCTAssertEqual(after, before, "\(what) prekey message created nothing")
        }
        // A new session from the same bundle (a new EK_A) is not a replay.
        try await alice.manager.processBundle(try await bundleWithoutOneTimePreKey(of: bob, server: server), for: bob.address)
        let fresh = try await alice.manager.encrypt(utf8("new session"), to: bob.address)
        let freshReceived = try await bob.manager.decrypt(fresh, from: alice.address)
        XCTAssertEqual(freshReceived.plaintext, utf8("new session"))
        XCTAssertTrue(freshReceived.establishedSession)
    }

    func testTheReplayRecordGoesAwayWhenItsSignedPrekeyExpires() async throws {
        let server = FakeServer()
        let clock = FakeClock()
        let alice = try await TestDevice("alice", 1, seed: 2010, server: server)
        let bob = try await TestDevice("bob", 1, seed: 2011, server: server, clock: clock)
        try await alice.manager.processBundle(try await bundleWithoutOneTimePreKey(of: bob, server: server), for: bob.address)
        let message = try await alice.manager.encrypt(utf8("hi"), to: bob.address)
        let baseKey = try PreKeyMessage(serialized: message).prefix.baseKey
        _ = try await bob.manager.decrypt(message, from: alice.address)
        try await bob.store.deleteSession(for: alice.address)

        // Rotated: the record stays with signed prekey 1 for its grace period.
        clock.advance(bySeconds: Days.seconds(7))
        let rotation = try await bob.manager.maintainPreKeys()
        XCTAssertEqual(rotation.signedPreKey?.id, 2)
        let rotated = try await bob.storedPreKeys()
        XCTAssertEqual(rotated.previousSignedPreKeys.first?.key.id, 1)
        XCTAssertEqual(rotated.previousSignedPreKeys.first?.recordedBaseKeyCount, 1)
        XCTAssertEqual(rotated.currentSignedPreKey.recordedBaseKeyCount, 0)
        let keptRecord = try await bob.store.hasRecordedBaseKey(baseKey, signedPreKeyID: 1)
        XCTAssertTrue(keptRecord, "the record stays with the retired signed prekey")
        await assertThrowsAsync(.duplicateMessage) { try await bob.manager.decrypt(message, from: alice.address) }

        // Expired: the signed prekey and its record go in the same write.
        clock.advance(bySeconds: Days.seconds(30))
        _ = try await bob.manager.maintainPreKeys()
        let expired = try await bob.storedPreKeys()
        XCTAssertNil(expired.signedPreKey(id: 1))
        let expiredRecord = try await bob.store.hasRecordedBaseKey(baseKey, signedPreKeyID: 1)
        XCTAssertFalse(expiredRecord, "no record of EK_A is left")
        XCTAssertEqual(expired.signedPreKeyEntries.map(\.recordedBaseKeyCount), [0, 0], "signed prekeys 3 and 2 hold no record")
        let before = await bob.snapshot()
        await assertThrowsAsync(.unknownPreKey) { try await bob.manager.decrypt(message, from: alice.address) }
        let after = await bob.snapshot()
        XCTAssertEqual(after, before)
    }

    func testTheSignedPrekeyIsRotatedEarlyOnceItHoldsTheMaximumNumberOfReplayRecords() async throws {
        let server = FakeServer()
        let policy = try PreKeyPolicy(maximumRecordedBaseKeys: 2)
        let bob = try await TestDevice("bob", 1, seed: 2020, server: server, policy: policy)
        for index in 0 ..< 2 {
            let sender = try await TestDevice("sender\(index)", 1, seed: 2021 + UInt64(index), server: server)
            try await sender.startSession(with: bob.address, server: server)
            _ = try await bob.manager.decrypt(try await sender.manager.encrypt([1], to: bob.address), from: sender.address)
            let upload = try await bob.manager.maintainPreKeys()
            if index == 0 {
                XCTAssertNil(upload.signedPreKey, "one record: not due")
            } else {
                XCTAssertEqual(upload.signedPreKey?.id, 2, "two records: rotated days before the 7-day schedule")
            }
        }
        let keys = try await bob.storedPreKeys()
        XCTAssertEqual(keys.previousSignedPreKeys.map(\.recordedBaseKeyCount), [2], "the records stay with the retired key")
        XCTAssertEqual(keys.currentSignedPreKey.recordedBaseKeyCount, 0)
    }

    func testAFailedPrekeyMessageRecordsNothing() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 2030, server: server)
        let bob = try await TestDevice("bob", 1, seed: 2031, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("first"), to: bob.address)
        let prefix = try PreKeyMessage(serialized: message).prefix
        let before = await bob.snapshot()
        func assertNothingRecorded(_ what: String) async throws {
            let keys = try await bob.storedPreKeys()
            let recorded = try await bob.store.hasRecordedBaseKey(prefix.baseKey, signedPreKeyID: prefix.signedPreKeyID)
            XCTAssertFalse(recorded, what)
            XCTAssertEqual(keys.currentSignedPreKey.recordedBaseKeyCount, 0, what)
            XCTAssertNotNil(keys.oneTimePreKey(id: try XCTUnwrap(prefix.oneTimePreKeyID)), what)
            let after = await bob.snapshot()
            XCTAssertEqual(after, before, what)
        }
        // A bad tag, and a message claiming another counter (the AEAD fails after X3DH ran).
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.decrypt(flipped(message, at: message.count - 1), from: alice.address) }
        try await assertNothingRecorded("a bad tag")
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.decrypt(flipped(message, at: 74 + 40), from: alice.address) }
        try await assertNothingRecorded("another counter")
        // The trust evaluator or the store failing after a successful decryption.
        await bob.trust.setFailing(true)
        let trustFailure = await capture { () async throws(SessionError) in try await bob.manager.decrypt(message, from: alice.address) }
        guard case .failure(.storage) = trustFailure else { return XCTFail("expected a storage error, got \(trustFailure)") }
        try await assertNothingRecorded("the trust evaluator failed")
        await bob.trust.setFailing(false)
        await bob.store.setFailWrites(true)
        await assertThrowsAsync(.storage("injected write failure")) { try await bob.manager.decrypt(message, from: alice.address) }
        try await assertNothingRecorded("the store write failed")
        await bob.store.setFailWrites(false)

        _ = try await bob.manager.decrypt(message, from: alice.address)
        let recorded = try await bob.store.hasRecordedBaseKey(prefix.baseKey, signedPreKeyID: prefix.signedPreKeyID)
        XCTAssertTrue(recorded)
    }

    // MARK: Re-attribution

    func testAPrekeyMessageReattributedToAnotherAddressFailsAndRecordsNothing() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 2040, server: server)
        let bob = try await TestDevice("bob", 1, seed: 2041, server: server)
        let carol = try await TestDevice("carol", 1, seed: 2042, server: server)
        // Bob already talks to Carol, so a record exists for one of the wrong addresses.
        try await carol.startSession(with: bob.address, server: server)
        _ = try await bob.manager.decrypt(try await carol.manager.encrypt(utf8("hi bob"), to: bob.address), from: carol.address)

        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("from alice"), to: bob.address)
        let askedBefore = await bob.trust.askedAbout
        for wrong in [carol.address, address("alice", 2), address("mallory", 1)] {
            let before = await bob.snapshot()
            await assertThrowsAsync(.invalidMessage) { try await bob.manager.decrypt(message, from: wrong) }
            let after = await bob.snapshot()
            XCTAssertEqual(after, before, "from \(wrong): no session, no one-time prekey consumed, no EK_A recorded")
        }
        let askedAfter = await bob.trust.askedAbout
        XCTAssertEqual(askedAfter, askedBefore, "the trust store was not asked about (and recorded nothing for) the wrong addresses")
        let carolKey = await bob.trust.key(for: carol.address)
        XCTAssertEqual(carolKey, carol.identity.publicKey, "Carol's record still holds Carol's key")
        for wrong in [address("alice", 2), address("mallory", 1)] {
            let recorded = await bob.trust.key(for: wrong)
            XCTAssertNil(recorded)
        }

        let received = try await bob.manager.decrypt(message, from: alice.address)
        XCTAssertEqual(received.plaintext, utf8("from alice"))
        XCTAssertEqual(received.sender, alice.address)
    }

    func testARatchetMessageReattributedToAnotherAddressFails() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 2050, server: server)
        let bob = try await TestDevice("bob", 1, seed: 2051, server: server)
        let carol = try await TestDevice("carol", 1, seed: 2052, server: server)
        for peer in [alice, carol] {
            try await peer.startSession(with: bob.address, server: server)
            _ = try await bob.manager.decrypt(try await peer.manager.encrypt(utf8("hello"), to: bob.address), from: peer.address)
            _ = try await peer.manager.decrypt(try await bob.manager.encrypt(utf8("reply"), to: peer.address), from: bob.address)
        }
        let message = try await alice.manager.encrypt(utf8("ratchet"), to: bob.address)
        XCTAssertEqual(message.first, 0x21)
        let before = await bob.snapshot()
        let askedBefore = await bob.trust.askedAbout
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.decrypt(message, from: carol.address) }
        await assertThrowsAsync(.noSession) { try await bob.manager.decrypt(message, from: address("alice", 2)) }
        let after = await bob.snapshot()
        XCTAssertEqual(after, before)
        let askedAfter = await bob.trust.askedAbout
        XCTAssertEqual(askedAfter, askedBefore)
        let received = try await bob.manager.decrypt(message, from: alice.address)
        XCTAssertEqual(received.plaintext, utf8("ratchet"))
        // Carol's session was not disturbed.
        let fromCarol = try await carol.manager.encrypt(utf8("still here"), to: bob.address)
        let atBob = try await bob.manager.decrypt(fromCarol, from: carol.address)
        XCTAssertEqual(atBob.plaintext, utf8("still here"))
    }

    // MARK: Identity observation

    func testDecryptReportsFirstUseThenUnchangedThenAChangedIdentity() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 2060, server: server)
        let bob = try await TestDevice("bob", 1, seed: 2061, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let first = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("1"), to: bob.address), from: alice.address)
        XCTAssertEqual(first.identityObservation, .firstUse)
        XCTAssertEqual(first.senderIdentityKey, alice.identity.publicKey)
        XCTAssertEqual(first.sender, alice.address)
        XCTAssertTrue(first.establishedSession)
        let second = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("2"), to: bob.address), from: alice.address)
        XCTAssertEqual(second.identityObservation, .unchanged)
        XCTAssertFalse(second.establishedSession)
        _ = try await alice.manager.decrypt(try await bob.manager.encrypt(utf8("r"), to: alice.address), from: bob.address)
        let third = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("3"), to: bob.address), from: alice.address)
        XCTAssertEqual(third.identityObservation, .unchanged)

        // Alice reinstalls: a new identity at the same address.
        let newAlice = try await TestDevice("alice", 1, seed: 2062, server: server)
        try await newAlice.startSession(with: bob.address, server: server)
        let changed = try await bob.manager.decrypt(try await newAlice.manager.encrypt(utf8("4"), to: bob.address), from: alice.address)
        XCTAssertEqual(changed.plaintext, utf8("4"))
        XCTAssertEqual(changed.identityObservation, .changed(previous: alice.identity.publicKey))
        XCTAssertEqual(changed.senderIdentityKey, newAlice.identity.publicKey)
        XCTAssertTrue(changed.establishedSession)
        await assertThrowsAsync(.untrustedIdentity) { try await bob.manager.encrypt(utf8("?"), to: alice.address) }
        await bob.trust.accept(alice.address)
        let accepted = try await bob.manager.decrypt(try await newAlice.manager.encrypt(utf8("5"), to: bob.address), from: alice.address)
        XCTAssertEqual(accepted.identityObservation, .unchanged)
    }

    func testTheBeforePersistingStepSeesTheSameDecryptedMessage() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 2070, server: server)
        let bob = try await TestDevice("bob", 1, seed: 2071, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("seen first"), to: bob.address)
        actor Seen { var messages: [DecryptedMessage] = []; func add(_ m: DecryptedMessage) { messages.append(m) } }
        let seen = Seen()
        let store = bob.base
        let bobAddress = bob.address
        let returned = try await bob.manager.decrypt(message, from: alice.address, beforePersisting: { (decrypted: DecryptedMessage) async throws(SessionError) in
            await seen.add(decrypted)
            let stored = await store.loadSession(for: decrypted.sender)
            XCTAssertNil(stored, "the step runs before the session is persisted")
            XCTAssertNotEqual(decrypted.sender, bobAddress)
        })
        let messages = await seen.messages
        XCTAssertEqual(messages.count, 1)
        XCTAssertEqual(messages.first?.plaintext, returned.plaintext)
        XCTAssertEqual(messages.first?.identityObservation, .firstUse)
        XCTAssertEqual(messages.first?.sender, alice.address)
        XCTAssertEqual(messages.first?.establishedSession, true)
        let stored = await bob.base.loadSession(for: alice.address)
        XCTAssertNotNil(stored)
    }
}
