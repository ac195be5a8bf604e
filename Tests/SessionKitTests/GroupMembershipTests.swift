import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Issue 17: groups have members. A distribution or group message from a device that is not a
/// member is refused (`notAGroupMember`, disposition drop) and changes nothing; a removed member
/// stays removed until added again; relabelled and re-attributed group messages are dropped,
/// never kept; a group message ahead of its distribution is kept by the manager (durably, with
/// an expiry and a bound) and released, decrypted, with the distribution.
final class GroupMembershipTests: XCTestCase {
    private struct Group {
        let server = FakeServer()
        let team = groupID("team")
        let clock = FakeClock()
        let alice: TestDevice
        let bob: TestDevice
        let mallory: TestDevice

        init() async throws {
            alice = try await TestDevice("alice", 1, seed: 9101, server: server, clock: clock)
            bob = try await TestDevice("bob", 1, seed: 9102, server: server, clock: clock)
            mallory = try await TestDevice("mallory", 1, seed: 9103, server: server, clock: clock)
            try await makeGroup(team, of: [alice, bob])
            try await alice.startSession(with: bob.address, server: server)
            try await mallory.startSession(with: bob.address, server: server)
        }

        /// Alice's distribution as an envelope for Bob.
        func aliceDistribution() async throws -> MessageEnvelope {
            let outcomes = try await alice.manager.distributeSenderKey(for: team, to: [bob.address])
            return try XCTUnwrap(outcomes.first?.envelope)
        }
    }

    func testANonMembersDistributionAndGroupMessagesAreRefusedAndChangeNothing() async throws {
        let g = try await Group()
        // Mallory has a pairwise session with Bob but is not in the group.
        let outcomes = try await g.mallory.manager.distributeSenderKey(for: g.team, to: [g.bob.address])
        let distribution = try XCTUnwrap(outcomes.first?.envelope)
        let before = await g.bob.snapshot(groups: [g.team], senders: [g.mallory.address])
        await assertThrowsAsync(.notAGroupMember) { try await g.bob.manager.receive(distribution) }
        let plain = try await g.mallory.manager.senderKeyDistributionMessage(for: g.team).serialized
        await assertThrowsAsync(.notAGroupMember) {
            try await g.bob.manager.processSenderKeyDistribution(plain, for: g.team, from: g.mallory.address)
        }
        let message = try await g.mallory.manager.groupEncryptEnvelope(utf8("let me in"), for: g.team)
        await assertThrowsAsync(.notAGroupMember) { try await g.bob.manager.receive(message) }
        let after = await g.bob.snapshot(groups: [g.team], senders: [g.mallory.address])
        XCTAssertEqual(after, before, "no chain stored and the pairwise session not advanced")
        let kept = await g.bob.base.loadPendingGroupMessages(for: g.team, sender: g.mallory.address)
        XCTAssertEqual(kept, [], "a non-member's message is not kept")
        XCTAssertEqual(SessionError.notAGroupMember.disposition, .drop)
    }

    /// A removed member who resends its (old or new) distribution stays out until re-added.
    func testARemovedMemberCannotRejoinByResendingItsDistribution() async throws {
        let g = try await Group()
        try await g.bob.manager.setGroupMembers([g.alice.address, g.mallory.address], for: g.team)
        try await g.alice.manager.setGroupMembers([g.bob.address, g.mallory.address], for: g.team)
        try await g.mallory.manager.setGroupMembers([g.alice.address, g.bob.address], for: g.team)
        let firstOutcomes = try await g.mallory.manager.distributeSenderKey(for: g.team, to: [g.bob.address])
        let first = try XCTUnwrap(firstOutcomes.first?.envelope)
        _ = try await g.bob.manager.receive(first)

        // Bob removes Mallory (the roster changed); Mallory resends a distribution.
        _ = try await g.bob.manager.removeMembers([g.mallory.address], from: g.team, remaining: [g.alice.address])
        let members = try await g.bob.manager.groupMembers(of: g.team)
        XCTAssertEqual(members, [g.alice.address])
        _ = try await g.mallory.manager.rotateSenderKey(for: g.team)
        let againOutcomes = try await g.mallory.manager.distributeSenderKey(for: g.team, to: [g.bob.address])
        let again = try XCTUnwrap(againOutcomes.first?.envelope)
        await assertThrowsAsync(.notAGroupMember) { try await g.bob.manager.receive(again) }
        let message = try await g.mallory.manager.groupEncryptEnvelope(utf8("still here"), for: g.team)
        await assertThrowsAsync(.notAGroupMember) { try await g.bob.manager.receive(message) }

        // Added again by the app, the same distribution is accepted.
        try await g.bob.manager.addGroupMembers([g.mallory.address], to: g.team)
        guard case .senderKeyDistribution(_, _, _, let released, _) = try await g.bob.manager.receive(again) else {
            return XCTFail("a distribution")
        }
        XCTAssertEqual(released.map(\.plaintext), [], "nothing was kept while Mallory was out")
        let readmitted = try await g.bob.manager.receive(message)
        XCTAssertEqual(readmitted.plaintext, utf8("still here"))
    }

    /// A group message ahead of its distribution is kept by the manager (acknowledge it) and
    /// returned, decrypted and in order, with the distribution; each exactly once.
    func testAGroupMessageAheadOfItsDistributionIsKeptAndReleasedWithIt() async throws {
        let g = try await Group()
        let distribution = try await g.aliceDistribution()
        let early = [try await g.alice.manager.groupEncryptEnvelope(utf8("one"), for: g.team),
                     try await g.alice.manager.groupEncryptEnvelope(utf8("two"), for: g.team)]
        for message in early { await assertThrowsAsync(.unknownChain) { try await g.bob.manager.receive(message) } }
        let kept = await g.bob.base.loadPendingGroupMessages(for: g.team, sender: g.alice.address)
        XCTAssertEqual(kept.map(\.message), early.map(\.body))

        let handed = Handed()
        let received = try await g.bob.manager.receive(distribution, beforePersisting: { (message: ReceivedMessage) async throws(SessionError) in
            await handed.add(message.plaintext ?? [])
        })
        guard case let .senderKeyDistribution(group, sender, _, released, _) = received else { return XCTFail("a distribution") }
        XCTAssertEqual(group, g.team)
        XCTAssertEqual(sender, g.alice.address)
        XCTAssertEqual(released.map(\.plaintext), [utf8("one"), utf8("two")])
        let seen = await handed.all
        XCTAssertEqual(seen, [utf8("one"), utf8("two")], "each released message went through the step before persisting")
        let left = await g.bob.base.loadPendingGroupMessages(for: g.team, sender: g.alice.address)
        XCTAssertEqual(left, [])
        // Released once: delivered again they are duplicates.
        await assertThrowsAsync(.duplicateMessage) { try await g.bob.manager.receive(early[0]) }
        let none = try await g.bob.manager.releasePendingGroupMessages(for: g.team, from: g.alice.address)
        XCTAssertEqual(none.count, 0)
    }

    /// A release whose step fails keeps the message pending (nothing persisted for it).
    func testAFailedStepLeavesTheKeptMessagePending() async throws {
        let g = try await Group()
        let distribution = try await g.aliceDistribution()   // the chain at iteration 0
        let early = try await g.alice.manager.groupEncryptEnvelope(utf8("keep me"), for: g.team)
        await assertThrowsAsync(.unknownChain) { try await g.bob.manager.receive(early) }
        // The distribution stores the chain and releases the kept message.
        guard case let .senderKeyDistribution(_, _, _, first, _) = try await g.bob.manager.receive(distribution) else {
            return XCTFail("a distribution")
        }
        XCTAssertEqual(first.map(\.plaintext), [utf8("keep me")])
        // A second kept message whose step fails.
        let late = try await g.alice.manager.groupEncrypt(utf8("later"), for: g.team)
        let alice = g.alice.address
        try await g.bob.base.commit({ var c = StoreCommit(); c.pendingGroupMessage = PendingGroupMessage(
            id: 0, group: g.team, sender: alice, message: late, expiresAt: Timestamp(secondsSince1970: Int64.max)); return c }())
        await assertThrowsAsync(.storage("app full")) {
            try await g.bob.manager.releasePendingGroupMessages(for: g.team, from: alice, beforePersisting: { _ throws(SessionError) in
                throw .storage("app full")
            })
        }
        let still = await g.bob.base.loadPendingGroupMessages(for: g.team, sender: alice)
        XCTAssertEqual(still.map(\.message), [late])
        let released = try await g.bob.manager.releasePendingGroupMessages(for: g.team, from: alice)
        XCTAssertEqual(released.map(\.plaintext), [utf8("later")])
    }

    /// Messages kept from a member who is removed before its distribution arrives are never
    /// released.
    func testAMemberRemovedWhileItsMessagesWaitedGetsNothingReleased() async throws {
        let g = try await Group()
        let distribution = try await g.aliceDistribution()
        let early = try await g.alice.manager.groupEncryptEnvelope(utf8("before removal"), for: g.team)
        await assertThrowsAsync(.unknownChain) { try await g.bob.manager.receive(early) }
        _ = try await g.bob.manager.removeMembers([g.alice.address], from: g.team, remaining: [])
        await assertThrowsAsync(.notAGroupMember) { try await g.bob.manager.receive(distribution) }
        await assertThrowsAsync(.notAGroupMember) {
            try await g.bob.manager.releasePendingGroupMessages(for: g.team, from: g.alice.address)
        }
    }

    /// A kept message sent before the chain the distribution gives (messageKeyUnavailable) is
    /// not released and not kept any longer.
    func testAKeptMessageTheDistributionCannotOpenIsDropped() async throws {
        let g = try await Group()
        _ = try await g.alice.manager.senderKeyDistributionMessage(for: g.team)
        let before = try await g.alice.manager.groupEncryptEnvelope(utf8("before bob's copy"), for: g.team)
        await assertThrowsAsync(.unknownChain) { try await g.bob.manager.receive(before) }
        guard case let .senderKeyDistribution(_, _, _, released, _) = try await g.bob.manager.receive(try await g.aliceDistribution()) else {
            return XCTFail("a distribution")
        }
        XCTAssertEqual(released.count, 0)
        let left = await g.bob.base.loadPendingGroupMessages(for: g.team, sender: g.alice.address)
        XCTAssertEqual(left, [])
    }

    /// Kept messages expire after `pendingGroupMessageLifetime`, and at most
    /// `PendingGroupMessage.maximumPerSender` are kept per sender and group (the oldest go).
    func testKeptMessagesExpireAndAreBounded() async throws {
        let g = try await Group()
        _ = try await g.alice.manager.senderKeyDistributionMessage(for: g.team)
        let old = try await g.alice.manager.groupEncryptEnvelope(utf8("old"), for: g.team)
        await assertThrowsAsync(.unknownChain) { try await g.bob.manager.receive(old) }
        g.clock.advance(bySeconds: SessionManager.pendingGroupMessageLifetime + 1)
        // Alice's chain is past its age (`SenderKeyPolicy`): she replaces it (the distribution
        // is not delivered, so Bob keeps the next messages too).
        _ = try await g.alice.manager.rotateSenderKeyIfDue(for: g.team)
        let fresh = try await g.alice.manager.groupEncryptEnvelope(utf8("fresh"), for: g.team)
        await assertThrowsAsync(.unknownChain) { try await g.bob.manager.receive(fresh) }
        let kept = await g.bob.base.loadPendingGroupMessages(for: g.team, sender: g.alice.address)
        XCTAssertEqual(kept.map(\.message), [fresh.body], "the expired one was dropped when the next was kept")

        for index in 0 ..< PendingGroupMessage.maximumPerSender + 3 {
            let message = try await g.alice.manager.groupEncryptEnvelope(utf8("m\(index)"), for: g.team)
            await assertThrowsAsync(.unknownChain) { try await g.bob.manager.receive(message) }
        }
        let bounded = await g.bob.base.loadPendingGroupMessages(for: g.team, sender: g.alice.address)
        XCTAssertEqual(bounded.count, PendingGroupMessage.maximumPerSender)
        XCTAssertEqual(bounded.map(\.id), bounded.map(\.id).sorted(), "oldest first")
    }
}

/// What a step was handed.
private actor Handed {
    private(set) var all: [[UInt8]] = []
    func add(_ plaintext: [UInt8]) { all.append(plaintext) }
}
