import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Recovery through `SessionManager.receive(_:)` (SPEC §9): the undecryptable messages that get
/// a retry notice and those that do not, the limits on notices and on the advice to start a new
/// session, and what a notice does (and does not do) at the device whose message failed.
final class RecoveryTests: XCTestCase {
    /// Alice and Bob with a session in both directions (Alice has had Bob's reply, so she sends
    /// ratchet messages on a chain Bob knows), on one clock.
    private struct Pair {
        let server = FakeServer()
        let clock = FakeClock()
        let alice: TestDevice
        let bob: TestDevice

        init(seed: UInt64) async throws {
            alice = try await TestDevice("alice", 1, seed: seed, server: server, clock: clock)
            bob = try await TestDevice("bob", 1, seed: seed + 1, server: server, clock: clock)
            try await alice.startSession(with: bob.address, server: server)
            _ = try await bob.manager.receive(try await alice.manager.encryptEnvelope(utf8("hello"), to: bob.address))
            _ = try await alice.manager.receive(try await bob.manager.encryptEnvelope(utf8("hi"), to: alice.address))
        }

        /// Alice's next message to Bob, as an envelope.
        func aliceSends(_ text: String) async throws -> MessageEnvelope {
            try await alice.manager.encryptEnvelope(utf8(text), to: bob.address)
        }
    }

    /// The undecryptable message `received` holds (failing the test otherwise).
    private func undecryptable(_ received: ReceivedMessage, file: StaticString = #filePath, line: UInt = #line) throws -> UndecryptableMessage {
        guard case let .undecryptable(message) = received else {
            XCTFail("expected an undecryptable message, got \(received)", file: file, line: line)
            throw XCTSkip("no undecryptable message")
        }
        return message
    }

    /// The action of the retry-notice outcome `received` holds.
    private func action(_ received: ReceivedMessage, file: StaticString = #filePath, line: UInt = #line) throws -> RetryNoticeOutcome.Action {
        guard case let .retryNotice(outcome) = received else {
            XCTFail("expected a retry-notice outcome, got \(received)", file: file, line: line)
            throw XCTSkip("no outcome")
        }
        return outcome.action
    }

    private func isArchived(_ action: RetryNoticeOutcome.Action, reregistered: Bool = false) -> Bool {
        if case let .sessionArchived(peer) = action { return peer == reregistered }
        return false
    }

    // MARK: Scenario: Bob loses Alice's session row

    /// Bob loses his session with Alice: her next message is `noSession` at Bob, whose notice
    /// (addressed with the key of his trust record) makes Alice archive her session; she starts
    /// a new one from Bob's bundle and he reads her in it.
    func testALostSessionIsAnsweredWithANoticeThatMakesTheSenderStartAgain() async throws {
        let pair = try await Pair(seed: 4100)
        let (alice, bob) = (pair.alice, pair.bob)
        await bob.base.deleteSession(for: alice.address)

        let failed = try undecryptable(try await bob.manager.receive(try await pair.aliceSends("lost")))
        XCTAssertEqual(failed.error, .noSession)
        XCTAssertEqual(failed.sender, alice.address)
        XCTAssertTrue(failed.startsNewSession)
        let notice = try XCTUnwrap(failed.retryNotice)
        XCTAssertEqual(notice.kind, .retryNotice)
        XCTAssertEqual(notice.sender, bob.address)
        XCTAssertEqual(notice.recipient, alice.address)

        let registered = try await alice.manager.registrationID(of: bob.address)
        let outcome = try await alice.manager.receive(notice)
        XCTAssertTrue(isArchived(try action(outcome)), "\(outcome)")
        guard case let .retryNotice(details) = outcome else { return XCTFail() }
        XCTAssertEqual(details.registrationID, registered, "the notice carries Bob's (unchanged) registration id")
        await assertThrowsAsync(.noSession) { try await alice.manager.encrypt(utf8("again"), to: bob.address) }
        let none = try await alice.manager.registrationID(of: bob.address)
        XCTAssertNil(none, "no current session")
        let stored = await alice.base.loadSession(for: bob.address)
        XCTAssertEqual(stored?.previousSessions.first?.isArchived, true, "the archived mark is stored")

        try await alice.startSession(with: bob.address, server: pair.server)
        let fresh = try await bob.manager.receive(try await pair.aliceSends("in a new session"))
        guard case let .message(message) = fresh else { return XCTFail("\(fresh)") }
        XCTAssertEqual(message.plaintext, utf8("in a new session"))
        XCTAssertTrue(message.establishedSession)
    }

    /// The archived session still decrypts late messages from the peer, and never becomes
    /// current again (the mark survives the record's reload).
    func testAnArchivedSessionDecryptsLateMessagesButNeverBecomesCurrent() async throws {
        let pair = try await Pair(seed: 4110)
        let (alice, bob) = (pair.alice, pair.bob)
        let late = try await bob.manager.encryptEnvelope(utf8("late"), to: alice.address)
        // Bob says he cannot read Alice's current chain (as a device that lost it would).
        let loaded = await alice.base.loadSession(for: bob.address)
        let sending = try XCTUnwrap(loaded?.currentSession)
        let registrationID = try await bob.manager.localRegistrationID()
        let notice = try RetryNotice(
            from: bob.identity, at: bob.address, to: alice.address, recipientIdentityKey: alice.identity.publicKey,
            registrationID: registrationID,
            failure: .pairwise(ratchetKey: sending.ratchet.sendingRatchetKey.publicKey.rawRepresentation, counter: 0))
        let outcome = try await alice.manager.processRetryNotice(notice.serialized, from: bob.address)
        XCTAssertTrue(isArchived(outcome.action))

        let received = try await alice.manager.receive(late)
        XCTAssertEqual(received.plaintext, utf8("late"), "the archived session decrypts a late message")
        await assertThrowsAsync(.noSession) { try await alice.manager.encrypt(utf8("x"), to: bob.address) }
        let stored = await alice.base.loadSession(for: bob.address)
        let record = try XCTUnwrap(stored)
        XCTAssertNil(record.currentSession)
        XCTAssertEqual(record.previousSessions.count, 1)
        XCTAssertTrue(record.previousSessions[0].isArchived)
        let reloaded = try SessionRecord(serialized: record.serialized())
        XCTAssertTrue(reloaded.previousSessions[0].isArchived, "persisted")
    }

    // MARK: What gets a notice

    func testOnlyTheFailuresOfSpecSection9GetANotice() async throws {
        let pair = try await Pair(seed: 4120)
        let (alice, bob) = (pair.alice, pair.bob)
        let message = try await pair.aliceSends("once")
        _ = try await bob.manager.receive(message)
        // A duplicate is thrown, as before.
        await assertThrowsAsync(.duplicateMessage) { try await bob.manager.receive(message) }
        // A forgery on a chain Bob's session knows: invalidMessage, thrown, no notice.
        let next = try await pair.aliceSends("next")
        var forged = next.body
        forged[forged.count - 1] ^= 1
        let forgedEnvelope = try MessageEnvelope(sender: alice.address, recipient: bob.address, kind: .message, body: forged)
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.receive(forgedEnvelope) }
        // A header that does not parse: thrown.
        let garbage = try MessageEnvelope(sender: alice.address, recipient: bob.address, kind: .message, body: [0x21, 1, 2, 3])
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.receive(garbage) }
        let marks = await bob.base.loadSession(for: alice.address)?.recoveryMarks
        XCTAssertEqual(marks?.isEmpty, true, "nothing was noted")

        // invalidMessage on a ratchet key no session knows: a notice.
        var unknownKey = forged
        unknownKey.replaceSubrange(1 ..< 33, with: try X25519.PrivateKey(using: SeededRandomSource(seed: 1)).publicKey.rawRepresentation)
        let unknown = try MessageEnvelope(sender: alice.address, recipient: bob.address, kind: .message, body: unknownKey)
        let failed = try undecryptable(try await bob.manager.receive(unknown))
        XCTAssertEqual(failed.error, .invalidMessage)
        XCTAssertNotNil(failed.retryNotice)
        XCTAssertFalse(failed.startsNewSession, "only noSession and unknownPreKey advise a new session")
        let genuine = try await bob.manager.receive(next)
        XCTAssertEqual(genuine.plaintext, utf8("next"), "the genuine message still decrypts")
    }

    func testTooManySkippedMessagesGetsANotice() async throws {
        let pair = try await Pair(seed: 4130)
        var last: MessageEnvelope?
        for index in 0 ... ProtocolLimits.defaultMaxSkip + 1 { last = try await pair.aliceSends("m\(index)") }
        let failed = try undecryptable(try await pair.bob.manager.receive(try XCTUnwrap(last)))
        XCTAssertEqual(failed.error, .tooManySkippedMessages)
        let notice = try XCTUnwrap(failed.retryNotice)
        let atAlice = try await pair.alice.manager.receive(notice)
        XCTAssertTrue(isArchived(try action(atAlice)), "Alice still sends on that chain")
    }

    // MARK: Limits at the receiver

    /// One notice per (sender, ratchet key), one per hour per device, one piece of advice per
    /// hour per device; the marks are in the record, so a new manager on the store keeps them.
    func testNoticesAndAdviceAreRateLimitedPerDeviceAndPersisted() async throws {
        let pair = try await Pair(seed: 4140)
        let (alice, bob) = (pair.alice, pair.bob)
        await bob.base.deleteSession(for: alice.address)
        let first = try undecryptable(try await bob.manager.receive(try await pair.aliceSends("1")))
        XCTAssertNotNil(first.retryNotice)
        XCTAssertTrue(first.startsNewSession)
        let second = try undecryptable(try await bob.manager.receive(try await pair.aliceSends("2")))
        XCTAssertNil(second.retryNotice, "the same ratchet key: no second notice")
        XCTAssertFalse(second.startsNewSession, "at most one piece of advice per hour")

        // Another manager on the same store (a restart): still limited.
        let restarted = SessionManager(store: bob.store, trust: bob.trust, localAddress: bob.address, clock: pair.clock)
        pair.clock.advance(bySeconds: 3599)
        let third = try undecryptable(try await restarted.receive(try await pair.aliceSends("3")))
        XCTAssertNil(third.retryNotice)
        XCTAssertFalse(third.startsNewSession)
        pair.clock.advance(bySeconds: 1)
        let fourth = try undecryptable(try await restarted.receive(try await pair.aliceSends("4")))
        XCTAssertNil(fourth.retryNotice, "an hour later, but still the same ratchet key")
        XCTAssertTrue(fourth.startsNewSession, "an hour later the advice is given again")

        // Another ratchet key: a notice only an hour after the last one.
        func onAnotherKey(_ seed: UInt64) async throws -> MessageEnvelope {
            var body = try await pair.aliceSends("k\(seed)").body
            body.replaceSubrange(1 ..< 33, with: try X25519.PrivateKey(using: SeededRandomSource(seed: seed)).publicKey.rawRepresentation)
            return try MessageEnvelope(sender: alice.address, recipient: bob.address, kind: .message, body: body)
        }
        let otherKey = try undecryptable(try await restarted.receive(try await onAnotherKey(1)))
        XCTAssertNotNil(otherKey.retryNotice, "a new key, an hour after the first notice")
        let right = try undecryptable(try await restarted.receive(try await onAnotherKey(2)))
        XCTAssertNil(right.retryNotice, "a new key right after a notice")
        pair.clock.advance(bySeconds: 3599)
        let stillWithin = try undecryptable(try await restarted.receive(try await onAnotherKey(3)))
        XCTAssertNil(stillWithin.retryNotice, "3599 s after the last notice")
        pair.clock.advance(bySeconds: 1)
        let hourLater = try undecryptable(try await restarted.receive(try await onAnotherKey(4)))
        XCTAssertNotNil(hourLater.retryNotice, "an hour after the last notice, on a new key")
    }

    // MARK: The sender's side: what a notice may and may not do

    /// A replayed, re-attributed, re-addressed or forged notice changes nothing.
    func testReplayedReattributedReaddressedAndForgedNoticesChangeNothing() async throws {
        let pair = try await Pair(seed: 4150)
        let (alice, bob) = (pair.alice, pair.bob)
        await bob.base.deleteSession(for: alice.address)
        let lost = try await bob.manager.receive(try await pair.aliceSends("lost"))
        let notice = try XCTUnwrap(try undecryptable(lost).retryNotice)

        // Re-attributed: the transport says another device sent it.
        let reattributed = try MessageEnvelope(sender: address("bob", 2), recipient: alice.address, kind: .retryNotice, body: notice.body)
        // Re-addressed: delivered to another device of Alice's (same identity key): it names alice.1.
        let aliceTablet = try await TestDevice("alice", 2, seed: 4152, server: pair.server, clock: pair.clock, identity: alice.identity)
        let readdressed = try MessageEnvelope(sender: bob.address, recipient: aliceTablet.address, kind: .retryNotice, body: notice.body)
        // Forged: one bit of the MAC, or of the ratchet key under it.
        var forgedMAC = notice.body
        forgedMAC[forgedMAC.count - 1] ^= 1
        var forgedKey = notice.body
        forgedKey[forgedKey.count - 64 - 36] ^= 1
        let before = await alice.snapshot()
        await assertThrowsAsync(.invalidMessage) { try await alice.manager.receive(reattributed) }
        await assertThrowsAsync(.invalidMessage) { try await aliceTablet.manager.receive(readdressed) }
        for body in [forgedMAC, forgedKey] {
            let forged = try MessageEnvelope(sender: bob.address, recipient: alice.address, kind: .retryNotice, body: body)
            await assertThrowsAsync(.invalidMessage) { try await alice.manager.receive(forged) }
        }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before, "nothing changed")

        // The genuine notice acts once; its replay (even hours later) finds Alice moved on.
        let acted = try await alice.manager.receive(notice)
        XCTAssertTrue(isArchived(try action(acted)))
        try await alice.startSession(with: bob.address, server: pair.server)
        pair.clock.advance(bySeconds: 5 * 3600)
        let moved = await alice.snapshot()
        guard case .ignored = try action(try await alice.manager.receive(notice)) else { return XCTFail("a replay acted") }
        let afterReplay = await alice.snapshot()
        XCTAssertEqual(afterReplay, moved)
        _ = try await alice.manager.encrypt(utf8("the new session is still current"), to: bob.address)
    }

    /// A notice under another identity key than the one on record for the sender's user is
    /// reported and does nothing.
    func testANoticeFromAChangedIdentityIsReportedAndDoesNothing() async throws {
        let pair = try await Pair(seed: 4160)
        let (alice, bob) = (pair.alice, pair.bob)
        let loaded = await alice.base.loadSession(for: bob.address)
        let sending = try XCTUnwrap(loaded?.currentSession)
        let impostor = try IdentityKeyPair(using: SeededRandomSource(seed: 0x1DE7))
        XCTAssertNotEqual(impostor.publicKey, bob.identity.publicKey)
        let notice = try RetryNotice(
            from: impostor, at: bob.address, to: alice.address, recipientIdentityKey: alice.identity.publicKey,
            registrationID: try XCTUnwrap(RegistrationID(rawValue: 9)),
            failure: .pairwise(ratchetKey: sending.ratchet.sendingRatchetKey.publicKey.rawRepresentation, counter: 0))
        let recorded = await alice.trust.key(for: bob.address)
        XCTAssertEqual(recorded, bob.identity.publicKey, "Alice's trust record for Bob")
        let before = await alice.snapshot()
        let outcome = try await alice.manager.processRetryNotice(notice.serialized, from: bob.address)
        guard case let .untrustedIdentity(key) = outcome.action else { return XCTFail("\(outcome)") }
        XCTAssertEqual(key, impostor.publicKey)
        let after = await alice.snapshot()
        XCTAssertEqual(after, before)
        _ = try await alice.manager.encrypt(utf8("still current"), to: bob.address)
    }

    /// A device is reset by notices at most once an hour (the time is in the record); a notice
    /// from a reinstalled device (another registration id) says so.
    func testResetsAreRateLimitedAndAReregisteredPeerIsReported() async throws {
        let pair = try await Pair(seed: 4170)
        let (alice, bob) = (pair.alice, pair.bob)
        func noticeForAlicesCurrentChain(from registrationID: RegistrationID) async throws -> [UInt8] {
            let loaded = await alice.base.loadSession(for: bob.address)
            let sending = try XCTUnwrap(loaded?.currentSession)
            return try RetryNotice(
                from: bob.identity, at: bob.address, to: alice.address, recipientIdentityKey: alice.identity.publicKey,
                registrationID: registrationID,
                failure: .pairwise(ratchetKey: sending.ratchet.sendingRatchetKey.publicKey.rawRepresentation, counter: 0)).serialized
        }
        let bobID = try await bob.manager.localRegistrationID()
        let first = try await alice.manager.processRetryNotice(try await noticeForAlicesCurrentChain(from: bobID), from: bob.address)
        XCTAssertTrue(isArchived(first.action, reregistered: false))
        try await alice.startSession(with: bob.address, server: pair.server)

        // Within the hour: reported, nothing changes.
        pair.clock.advance(bySeconds: 3599)
        let reinstalled = try XCTUnwrap(RegistrationID(rawValue: bobID.rawValue % 0x7FFF_FFFF + 1))
        let soon = try await noticeForAlicesCurrentChain(from: reinstalled)
        let before = await alice.snapshot()
        guard case .rateLimited = try await alice.manager.processRetryNotice(soon, from: bob.address).action else {
            return XCTFail("a second reset within the hour")
        }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before)

        // An hour after the first reset: the notice acts, and says Bob's id changed.
        pair.clock.advance(bySeconds: 1)
        let later = try await alice.manager.processRetryNotice(soon, from: bob.address)
        XCTAssertTrue(isArchived(later.action, reregistered: true), "\(later)")
    }

    // MARK: Groups

    /// A member that never got the sender's chain keeps its messages; once one has waited
    /// `distributionWait`, the next message of the chain (or the explicit call) yields a group
    /// notice, and the sender sends its current distribution to that member again.
    func testAMemberWithoutTheChainAsksForItAfterItsWait() async throws {
        let pair = try await Pair(seed: 4180)
        let (alice, bob) = (pair.alice, pair.bob)
        let group = try GroupID("recovery club")
        try await makeGroup(group, of: [alice, bob])
        _ = try await alice.manager.senderKeyDistributionMessage(for: group)   // never sent to Bob
        let first = try await alice.manager.groupEncryptEnvelope(utf8("g0"), for: group)
        await assertThrowsAsync(.unknownChain) { try await bob.manager.receive(first) }
        let early = try await bob.manager.retryNoticesForPendingGroupMessages(in: group, from: alice.address)
        XCTAssertEqual(early, [], "not before the wait")
        pair.clock.advance(bySeconds: SessionManager.distributionWait)
        let second = try await alice.manager.groupEncryptEnvelope(utf8("g1"), for: group)
        let failed = try undecryptable(try await bob.manager.receive(second))
        XCTAssertEqual(failed.error, .unknownChain)
        XCTAssertEqual(failed.group, group)
        let notice = try XCTUnwrap(failed.retryNotice)
        let parsed = try RetryNotice(verifying: notice.body, from: bob.address, localAddress: alice.address, identity: alice.identity)
        guard case let .group(noticeGroup, _, iteration) = parsed.failure else { return XCTFail("\(parsed)") }
        XCTAssertEqual(noticeGroup, group)
        XCTAssertEqual(iteration, 0, "the oldest message kept")
        let again = try await bob.manager.retryNoticesForPendingGroupMessages(in: group, from: alice.address)
        XCTAssertEqual(again, [], "one notice per chain")

        let outcome = try await alice.manager.receive(notice)
        guard case let .distributionResent(encryption) = try action(outcome) else { return XCTFail("\(outcome)") }
        let distribution = try XCTUnwrap(encryption.envelope)
        XCTAssertEqual(distribution.kind, .senderKeyDistribution)
        _ = try await bob.manager.receive(distribution)
        let third = try await alice.manager.groupEncryptEnvelope(utf8("g2"), for: group)
        let repaired = try await bob.manager.receive(third)
        XCTAssertEqual(repaired.plaintext, utf8("g2"), "the chain is repaired")

        // A replay of the notice within the hour does not send the distribution again.
        guard case .rateLimited = try action(try await alice.manager.receive(notice)) else { return XCTFail("resent twice") }
        // After the chain rotates, the notice names a chain Alice no longer sends on.
        pair.clock.advance(bySeconds: 3600)
        _ = try await alice.manager.rotateSenderKey(for: group)
        guard case .ignored = try action(try await alice.manager.receive(notice)) else { return XCTFail("acted on an old chain") }
    }

    func testAGroupNoticeFromANonMemberDoesNothing() async throws {
        let pair = try await Pair(seed: 4190)
        let (alice, bob) = (pair.alice, pair.bob)
        let group = try GroupID("members only")
        try await alice.manager.setGroupMembers([], for: group)
        _ = try await alice.manager.senderKeyDistributionMessage(for: group)
        let loadedChain = await alice.base.loadSendingChain(for: group)
        let chain = try XCTUnwrap(loadedChain)
        let notice = try RetryNotice(
            from: bob.identity, at: bob.address, to: alice.address, recipientIdentityKey: alice.identity.publicKey,
            registrationID: try await bob.manager.localRegistrationID(),
            failure: .group(group, chainID: chain.chainID.rawRepresentation, iteration: 0))
        guard case .ignored = try await alice.manager.processRetryNotice(notice.serialized, from: bob.address).action else {
            return XCTFail("a non-member got the chain")
        }
    }
}

extension RecoveryTests {
    /// SPEC §9 and the flood: a thousand forged and replayed notices reset the session
    /// once, and each costs one check (a key agreement and a MAC) whatever it holds.
    func testAFloodOfForgedAndReplayedNoticesResetsOnce() async throws {
        let pair = try await Pair(seed: 4200)
        let (alice, bob) = (pair.alice, pair.bob)
        let loaded = await alice.base.loadSession(for: bob.address)
        let sending = try XCTUnwrap(loaded?.currentSession)
        let genuine = try RetryNotice(
            from: bob.identity, at: bob.address, to: alice.address, recipientIdentityKey: alice.identity.publicKey,
            registrationID: try await bob.manager.localRegistrationID(),
            failure: .pairwise(ratchetKey: sending.ratchet.sendingRatchetKey.publicKey.rawRepresentation, counter: 3)).serialized
        var archived = 0, refused = 0, inert = 0
        let random = SeededRandomSource(seed: 4201)
        for index in 0 ..< 1000 {
            var bytes = genuine
            if index % 2 == 1 {
                // A forgery: some bytes after the addresses changed at random.
                let position = 1 + 10 + 10 + Int(random.bytes(1)[0]) % (bytes.count - 21)
                bytes[position] ^= random.bytes(1)[0] | 1
            }
            do {
                switch try await alice.manager.processRetryNotice(bytes, from: bob.address).action {
                case .sessionArchived: archived += 1
                case .ignored, .rateLimited: inert += 1
                default: XCTFail("unexpected action")
                }
            } catch {
                refused += 1
            }
            if index == 10 { try await alice.startSession(with: bob.address, server: pair.server) }
        }
        XCTAssertEqual(archived, 1, "one reset")
        XCTAssertEqual(refused, 500, "every forgery refused")
        XCTAssertEqual(inert, 499, "every replay inert")
        _ = try await alice.manager.encrypt(utf8("the session started after the reset is still current"), to: bob.address)
    }
}

extension RecoveryTests {
    /// A prekey message naming a one-time prekey Bob does not hold: `unknownPreKey`, answered
    /// with a notice addressed with the prefix's IK_A (Bob has no session with Alice and no
    /// trust record for her), which makes Alice drop the session she sends prekey messages on.
    func testAnUnknownPrekeyIsAnsweredWithANoticeAddressedFromThePrefix() async throws {
        let server = FakeServer()
        let clock = FakeClock()
        let alice = try await TestDevice("alice", 1, seed: 4300, server: server, clock: clock)
        let bob = try await TestDevice("bob", 1, seed: 4301, server: server, clock: clock)
        let published = try await server.requireBundle(for: bob.address)
        // One-time prekeys are not signed: a bundle naming one Bob never issued still checks.
        let unknownOPK = PreKeyBundle.OneTimeKey(id: 9999, publicKey: try X25519.PrivateKey(using: SeededRandomSource(seed: 7)).publicKey)
        let bundle = try PreKeyBundle(
            identityKey: published.identityKey, signedPreKeyID: published.signedPreKeyID, signedPreKey: published.signedPreKey,
            signedPreKeySignature: published.signedPreKeySignature, oneTimePreKey: unknownOPK, registrationID: published.registrationID)
        try await alice.manager.processBundle(bundle, for: bob.address)
        let failed = try undecryptable(try await bob.manager.receive(try await alice.manager.encryptEnvelope(utf8("hello"), to: bob.address)))
        XCTAssertEqual(failed.error, .unknownPreKey)
        XCTAssertTrue(failed.startsNewSession)
        let notice = try XCTUnwrap(failed.retryNotice, "addressed with IK_A from the prefix")
        let outcome = try await alice.manager.receive(notice)
        XCTAssertTrue(isArchived(try action(outcome)), "\(outcome)")
        try await alice.startSession(with: bob.address, server: server)
        let fresh = try await bob.manager.receive(try await alice.manager.encryptEnvelope(utf8("again"), to: bob.address))
        XCTAssertEqual(fresh.plaintext, utf8("again"))
    }
}

extension RecoveryTests {
    /// A group message sent before this member got the chain (`messageKeyUnavailable`) is
    /// answered at once with a group notice; the sender, which still sends on that chain, sends
    /// its current distribution again (which the member already holds: it changes nothing there).
    func testMessageKeyUnavailableGetsAGroupNotice() async throws {
        let pair = try await Pair(seed: 4400)
        let (alice, bob) = (pair.alice, pair.bob)
        let group = try GroupID("late joiner")
        try await makeGroup(group, of: [alice, bob])
        _ = try await alice.manager.senderKeyDistributionMessage(for: group)
        let early = try await alice.manager.groupEncryptEnvelope(utf8("before bob"), for: group)
        for outcome in try await alice.manager.distributeSenderKey(for: group, to: [bob.address]) {
            _ = try await bob.manager.receive(try XCTUnwrap(outcome.envelope))
        }
        let failed = try undecryptable(try await bob.manager.receive(early))
        XCTAssertEqual(failed.error, .messageKeyUnavailable)
        XCTAssertEqual(failed.group, group)
        XCTAssertFalse(failed.startsNewSession)
        let notice = try XCTUnwrap(failed.retryNotice)
        guard case .distributionResent = try action(try await alice.manager.receive(notice)) else { return XCTFail("not resent") }
        let later = try await alice.manager.groupEncryptEnvelope(utf8("after"), for: group)
        let received = try await bob.manager.receive(later)
        XCTAssertEqual(received.plaintext, utf8("after"))
    }
}
