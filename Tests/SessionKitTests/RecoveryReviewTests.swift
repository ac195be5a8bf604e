import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// The third review's and trial's recovery findings (issue 27), each as the attack or the
/// ordinary day that demonstrated it: a member added later asks for the group's history; a
/// device that restored its account starts a new session before its notice arrives.
final class RecoveryReviewTests: XCTestCase {
    private let server = FakeServer()
    private let clock = FakeClock()

    /// Alice with sessions to each of `peers` (each has read her first message and answered).
    private func connect(_ alice: LoggingTestDevice, to peers: [LoggingTestDevice]) async throws {
        for peer in peers {
            try await alice.startSession(with: peer.address, server: server)
            _ = try await peer.manager.receive(try await alice.manager.encryptEnvelope(utf8("hello"), to: peer.address))
            _ = try await alice.manager.receive(try await peer.manager.encryptEnvelope(utf8("hi"), to: alice.address))
        }
    }

    /// Alice with sessions to Bob and Carol (seeds `seed` to `seed + 2`).
    private func aliceWithBobAndCarol(seed: UInt64) async throws -> (LoggingTestDevice, LoggingTestDevice, LoggingTestDevice) {
        let alice = try await LoggingTestDevice("alice", 1, seed: seed, server: server, clock: clock)
        let bob = try await LoggingTestDevice("bob", 1, seed: seed + 1, server: server, clock: clock)
        let carol = try await LoggingTestDevice("carol", 1, seed: seed + 2, server: server, clock: clock)
        try await connect(alice, to: [bob, carol])
        return (alice, bob, carol)
    }

    /// A group notice from `member` for Alice's chain in `group`, naming `iteration`.
    private func groupNotice(
        from member: LoggingTestDevice, to alice: LoggingTestDevice, group: GroupID, iteration: UInt32
    ) async throws -> [UInt8] {
        let chain = await alice.store.loadSendingChain(for: group)
        let chainID = try XCTUnwrap(chain).chainID.rawRepresentation
        return try RetryNotice(
            from: member.identity, at: member.address, to: alice.address, recipientIdentityKey: alice.identity.publicKey,
            registrationID: try await member.manager.localRegistrationID(),
            failure: .group(group, chainID: chainID, iteration: iteration)
        ).serialized
    }

    /// Finding 1 (high): Carol is added to the group after Alice said g0–g2 there. Carol's client
    /// (or a malicious one writing iteration 0) sends a group notice naming iteration 0: Alice
    /// re-sends only what she said since Carol joined (g3), never the history before it. Bob, a
    /// member from the start, still gets everything from the iteration he names.
    func testAMemberAddedLaterIsNeverResentWhatWasSaidBeforeSheJoined() async throws {
        let (alice, bob, carol) = try await aliceWithBobAndCarol(seed: 27_100)
        let group = try GroupID("book club")
        try await alice.manager.setGroupMembers([bob.address], for: group)
        _ = try await alice.manager.distributeSenderKey(for: group, to: [bob.address])
        for index in 0 ..< 3 { _ = try await alice.manager.groupEncrypt(utf8("g\(index)"), for: group) }

        try await alice.manager.addGroupMembers([carol.address], to: group)
        _ = try await alice.manager.distributeSenderKey(for: group, to: [carol.address])
        _ = try await alice.manager.groupEncrypt(utf8("g3"), for: group)

        let fromCarol = try await alice.manager.processRetryNotice(
            try await groupNotice(from: carol, to: alice, group: group, iteration: 0), from: carol.address)
        guard case .distributionResent = fromCarol.action else { return XCTFail("\(fromCarol)") }
        XCTAssertEqual(fromCarol.resend.map(\.plaintext), [utf8("g3")], "nothing from before Carol joined")

        clock.advance(bySeconds: 3601)
        let fromBob = try await alice.manager.processRetryNotice(
            try await groupNotice(from: bob, to: alice, group: group, iteration: 1), from: bob.address)
        guard case .distributionResent = fromBob.action else { return XCTFail("\(fromBob)") }
        XCTAssertEqual(fromBob.resend.map(\.plaintext), [utf8("g1"), utf8("g2"), utf8("g3")])
    }

    /// Setting the members again keeps the join point of a device that stays a member, a device
    /// removed and added again joins anew, and a rotated chain starts every member at its first
    /// iteration.
    func testJoinPointsFollowMembershipAndRotation() async throws {
        let (alice, bob, carol) = try await aliceWithBobAndCarol(seed: 27_110)
        let group = try GroupID("join points")
        try await alice.manager.setGroupMembers([bob.address], for: group)
        _ = try await alice.manager.distributeSenderKey(for: group, to: [bob.address])
        var points = await alice.store.loadGroupJoinPoints(for: group)
        XCTAssertEqual(points[bob.address]?.iteration, 0, "a member when the chain was made joins at its start")
        _ = try await alice.manager.groupEncrypt(utf8("m0"), for: group)
        _ = try await alice.manager.groupEncrypt(utf8("m1"), for: group)

        try await alice.manager.setGroupMembers([bob.address, carol.address], for: group)
        points = await alice.store.loadGroupJoinPoints(for: group)
        XCTAssertEqual(points[bob.address]?.iteration, 0, "Bob stayed a member")
        XCTAssertEqual(points[carol.address]?.iteration, 2, "Carol joins at the next iteration")

        _ = try await alice.manager.groupEncrypt(utf8("m2"), for: group)
        try await alice.manager.setGroupMembers([bob.address], for: group)
        let afterRemoval = await alice.store.loadGroupJoinPoints(for: group)
        XCTAssertNil(afterRemoval[carol.address])
        _ = try await alice.manager.groupEncrypt(utf8("m3"), for: group)
        try await alice.manager.addGroupMembers([carol.address], to: group)
        points = await alice.store.loadGroupJoinPoints(for: group)
        XCTAssertEqual(points[carol.address]?.iteration, 4, "added again: joins anew, after what was said while she was out")

        _ = try await alice.manager.removeMembers([bob.address], from: group, remaining: [carol.address])
        let loadedChain = await alice.store.loadSendingChain(for: group)
        let rotated = try XCTUnwrap(loadedChain)
        points = await alice.store.loadGroupJoinPoints(for: group)
        XCTAssertEqual(points, [carol.address: GroupJoinPoint(chainID: rotated.chainID.rawRepresentation, iteration: 0)])
    }

    /// With no join point on record (members written by a store or an older version that kept
    /// none), a group notice re-sends the distribution but no logged message.
    func testAMemberWithoutAJoinPointGetsNoLoggedMessage() async throws {
        let alice = try await LoggingTestDevice("alice", 1, seed: 27_120, server: server, clock: clock)
        let bob = try await LoggingTestDevice("bob", 1, seed: 27_121, server: server, clock: clock)
        try await connect(alice, to: [bob])
        let group = try GroupID("no points")
        try await alice.manager.setGroupMembers([bob.address], for: group)
        _ = try await alice.manager.distributeSenderKey(for: group, to: [bob.address])
        _ = try await alice.manager.groupEncrypt(utf8("said"), for: group)
        var commit = StoreCommit()
        commit.store(members: [bob.address], for: group)
        try await alice.store.commit(commit)

        let outcome = try await alice.manager.processRetryNotice(
            try await groupNotice(from: bob, to: alice, group: group, iteration: 0), from: bob.address)
        guard case .distributionResent = outcome.action else { return XCTFail("\(outcome)") }
        XCTAssertEqual(outcome.resend, [])
    }

    /// Finding 3 (high, from the trial): Bob restores his account on a new phone, starts a new
    /// session with Alice and writes; the relay then redelivers Alice's a0 and a1, which his
    /// restored device cannot read, and his notice for them reaches Alice after his new session.
    /// Alice has moved on (no session changes), but the send log still gives a0 and a1 back,
    /// once, and they reach Bob in the new session.
    func testANoticeAfterThePeersNewSessionStillGetsTheMessagesBackOnce() async throws {
        let alice = try await LoggingTestDevice("alice", 1, seed: 27_130, server: server, clock: clock)
        let bob = try await LoggingTestDevice("bob", 1, seed: 27_131, server: server, clock: clock)
        try await connect(alice, to: [bob])
        _ = try await alice.manager.encryptEnvelope(utf8("a0"), to: bob.address)
        let a1 = try await alice.manager.encryptEnvelope(utf8("a1"), to: bob.address)

        // The restored device: the same identity, none of the sessions.
        let restored = try await LoggingTestDevice("bob", 1, seed: 27_132, server: server, clock: clock, identity: bob.identity)
        try await restored.startSession(with: alice.address, server: server)
        let back = try await alice.manager.receive(try await restored.manager.encryptEnvelope(utf8("I'm back"), to: alice.address))
        guard case .message = back else { return XCTFail("\(back)") }

        let notice = try expectRetryNotice(try await restored.manager.receive(a1))
        let outcome = try expectRetryOutcome(try await alice.manager.receive(notice))
        guard case .loggedMessagesReturned = outcome.action else { return XCTFail("\(outcome)") }
        XCTAssertEqual(outcome.resend.map(\.plaintext), [utf8("a0"), utf8("a1")])

        let resent = await alice.manager.resendLoggedMessages(outcome.resend, to: bob.address)
        XCTAssertEqual(resent.map(\.error), [nil, nil])
        var read: [[UInt8]] = []
        for message in resent {
            guard case let .message(message) = try await restored.manager.receive(try XCTUnwrap(message.envelope)) else {
                return XCTFail("a re-sent message did not decrypt")
            }
            read.append(message.plaintext)
        }
        XCTAssertEqual(read, [utf8("a0"), utf8("a1")])

        let replay = try expectRetryOutcome(try await alice.manager.receive(notice))
        guard case .ignored = replay.action else { return XCTFail("\(replay)") }
        XCTAssertEqual(replay.resend, [], "handed back once")
    }

    /// Finding 6 (a regression): Alice says g0 in the group before Bob was given her chain;
    /// g0 reaches Bob first and is kept for its chain. The distribution that arrives later holds
    /// the chain at iteration 1, so g0 can never decrypt: it is reported as the same message
    /// arriving after the distribution is (a placeholder and a notice), never dropped silently.
    func testAKeptMessageOlderThanTheDistributionIsReportedNotDropped() async throws {
        let alice = try await LoggingTestDevice("alice", 1, seed: 27_140, server: server, clock: clock)
        let bob = try await LoggingTestDevice("bob", 1, seed: 27_141, server: server, clock: clock)
        try await connect(alice, to: [bob])
        let group = try GroupID("early bird")
        try await alice.manager.setGroupMembers([bob.address], for: group)
        try await bob.manager.setGroupMembers([alice.address], for: group)
        _ = try await alice.manager.senderKeyDistributionMessage(for: group)
        let early = try await alice.manager.groupEncryptEnvelope(utf8("g0"), for: group)
        do {
            _ = try await bob.manager.receive(early)
            XCTFail("no chain yet")
        } catch {
            XCTAssertEqual(error, .unknownChain, "kept for its chain")
        }

        let distributed = try await alice.manager.distributeSenderKey(for: group, to: [bob.address])
        let distribution = try XCTUnwrap(distributed.first?.envelope)
        let received = try await bob.manager.receive(distribution)
        guard case let .senderKeyDistribution(_, _, _, released, undecryptable) = received else { return XCTFail("\(received)") }
        XCTAssertEqual(released.count, 0)
        XCTAssertEqual(undecryptable.map(\.error), [.messageKeyUnavailable], "reported, not dropped")
        XCTAssertEqual(undecryptable.first?.isAuthenticated, true, "its signature verified: a real message was lost")
        XCTAssertEqual(undecryptable.first?.group, group)
        let notice = try XCTUnwrap(undecryptable.first?.retryNotice, "with the notice the same message would get after it")
        let outcome = try expectRetryOutcome(try await alice.manager.receive(notice))
        guard case .distributionResent = outcome.action else { return XCTFail("\(outcome)") }
        let pending = await bob.store.loadPendingGroupMessages(for: group, sender: alice.address)
        XCTAssertEqual(pending, [], "no longer kept")
    }

    /// Finding 7 (low): forged messages from made-up senders leave no row in the store (their
    /// marks stay in memory, and still limit the advice to once an hour), and a failure that
    /// nothing authenticates says so, so that the app shows noise as noise.
    func testForgedMessagesFromMadeUpSendersLeaveNothingInTheStore() async throws {
        let bob = try await LoggingTestDevice("bob", 1, seed: 27_150, server: server, clock: clock)
        let before = await bob.store.addresses()
        for index in 0 ..< 40 {
            let mallory = TestSupport.address("mallory-\(index)", 1)
            var body: [UInt8] = [0x21]
            body += try X25519.PrivateKey(using: SeededRandomSource(seed: UInt64(index))).publicKey.rawRepresentation
            body += [0, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: UInt8(index), count: 48)
            let forged = try MessageEnvelope(sender: mallory, recipient: bob.address, kind: .message, body: body)
            guard case let .undecryptable(first) = try await bob.manager.receive(forged) else { return XCTFail("not undecryptable") }
            XCTAssertEqual(first.error, .noSession)
            XCTAssertFalse(first.isAuthenticated, "nothing of it is authenticated")
            XCTAssertTrue(first.startsNewSession)
            guard case let .undecryptable(again) = try await bob.manager.receive(forged) else { return XCTFail("not undecryptable") }
            XCTAssertFalse(again.startsNewSession, "the advice is still limited to once an hour")
        }
        let after = await bob.store.addresses()
        XCTAssertEqual(Set(after), Set(before), "no row for any made-up sender")
    }

    /// The trial's glue, in one call: Bob restored his account (same identity, new registration
    /// id) and added a tablet. Alice's send is refused (Bob's phone stale, the tablet missing);
    /// one call archives, fetches both bundles, and gives back what to send: the phone gets the
    /// logged messages of the archived session (the refused one among them), the tablet the
    /// refused message.
    func testOneCallHandlesTheServersDeviceListAnswer() async throws {
        let alice = try await LoggingTestDevice("alice", 1, seed: 27_160, server: server, clock: clock)
        let bob = try await LoggingTestDevice("bob", 1, seed: 27_161, server: server, clock: clock)
        try await connect(alice, to: [bob])
        _ = try await alice.manager.encryptEnvelope(utf8("unread"), to: bob.address)

        let restored = try await LoggingTestDevice("bob", 1, seed: 27_162, server: server, clock: clock, identity: bob.identity)
        let tablet = try await LoggingTestDevice("bob", 2, seed: 27_163, server: server, clock: clock, identity: bob.identity)
        var directory = DeviceDirectory()
        for device in [restored, tablet] {
            directory.register(device.address.deviceID, registrationID: try await device.manager.localRegistrationID())
        }
        _ = try await alice.manager.encrypt(utf8("are you there?"), to: bob.address)
        let mismatch = try directory.check(try await alice.manager.deviceListRequest(forUser: "bob"), excludingSenderDevice: nil)
        XCTAssertEqual(mismatch, DeviceListMismatch(stale: [1], missing: [2]))

        let server = self.server
        let outcomes = try await alice.manager.recoverFromDeviceListMismatch(
            mismatch, forUser: "bob", devices: [1, 2], resending: utf8("are you there?"),
            fetchingBundles: { try await server.requireBundle(for: $0) })
        XCTAssertEqual(outcomes.compactMap(\.error), [])
        var read: [ProtocolAddress: [[UInt8]]] = [:]
        for outcome in outcomes {
            let device = outcome.address == restored.address ? restored : tablet
            let received = try await device.manager.receive(try XCTUnwrap(outcome.envelope))
            read[outcome.address, default: []].append(try XCTUnwrap(received.plaintext))
        }
        XCTAssertEqual(read[restored.address], [utf8("unread"), utf8("are you there?")], "from the log, in order")
        XCTAssertEqual(read[tablet.address], [utf8("are you there?")])
        let request = try await alice.manager.deviceListRequest(forUser: "bob")
        XCTAssertTrue(try directory.check(request, excludingSenderDevice: nil).isEmpty, "the next send goes through")
    }

    /// Distributing to members without a session fetches their bundles in the same call; a
    /// member whose bundle is missing is reported, the others get the distribution.
    func testADistributionFetchesTheBundlesItNeeds() async throws {
        let alice = try await LoggingTestDevice("alice", 1, seed: 27_170, server: server, clock: clock)
        let bob = try await LoggingTestDevice("bob", 1, seed: 27_171, server: server, clock: clock)
        let carol = try await LoggingTestDevice("carol", 1, seed: 27_172, server: server, clock: clock)
        let ghost = TestSupport.address("ghost", 1)
        let group = try GroupID("fetching")
        try await alice.manager.setGroupMembers([bob.address, carol.address, ghost], for: group)
        try await bob.manager.setGroupMembers([alice.address], for: group)
        let server = self.server
        let outcomes = try await alice.manager.distributeSenderKey(
            for: group, to: [bob.address, carol.address, ghost], fetchingBundles: { await server.bundle(for: $0) })
        XCTAssertEqual(outcomes.map(\.address), [bob.address, carol.address, ghost])
        XCTAssertEqual(outcomes.map(\.error), [nil, nil, .noSession])
        let received = try await bob.manager.receive(try XCTUnwrap(outcomes.first?.envelope))
        guard case .senderKeyDistribution = received else { return XCTFail("\(received)") }
        let message = try await alice.manager.groupEncryptEnvelope(utf8("all here"), for: group)
        let read = try await bob.manager.receive(message)
        XCTAssertEqual(read.plaintext, utf8("all here"))
    }
}
