import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// The send log (SPEC §9, issue 19) on `InMemoryProtocolStore`: what is logged (application
/// content, pairwise by recipient, ratchet key and counter; group by chain and iteration), what
/// a retry notice returns and removes, expiry and the bound, the log off by default, and a log
/// kept apart from the store (applied after the commit).
final class SendLogTests: XCTestCase {
    private let server = FakeServer()
    private let clock = FakeClock()

    /// Alice and Bob with a session both ways (Alice has read Bob's reply).
    private func pair(seed: UInt64, logging: Bool = true, policy: SendLogPolicy = .default) async throws -> (LoggingTestDevice, LoggingTestDevice) {
        let alice = try await LoggingTestDevice("alice", 1, seed: seed, server: server, clock: clock, logging: logging, policy: policy)
        let bob = try await LoggingTestDevice("bob", 1, seed: seed + 1, server: server, clock: clock, logging: logging)
        try await alice.startSession(with: bob.address, server: server)
        _ = try await bob.manager.receive(try await alice.manager.encryptEnvelope(utf8("hello"), to: bob.address))
        _ = try await alice.manager.receive(try await bob.manager.encryptEnvelope(utf8("hi"), to: alice.address))
        return (alice, bob)
    }

    func testMessagesSentInOneCommitToManyDevicesAreLoggedPerDevice() async throws {
        let alice = try await LoggingTestDevice("alice", 1, seed: 5200, server: server, clock: clock)
        let bob = try await LoggingTestDevice("bob", 1, seed: 5201, server: server, clock: clock)
        let carol = try await LoggingTestDevice("carol", 1, seed: 5202, server: server, clock: clock)
        for peer in [bob, carol] { try await alice.startSession(with: peer.address, server: server) }
        let chains = [try await alice.currentChain(to: bob.address), try await alice.currentChain(to: carol.address)]
        let outcomes = try await alice.manager.encrypt(utf8("to both"), toDevices: [bob.address, carol.address])
        XCTAssertEqual(outcomes.compactMap(\.ciphertext).count, 2)
        for chain in chains {
            let logged = await alice.store.loadSendLog(for: chain, now: clock.now())
            XCTAssertEqual(logged.map(\.plaintext), [utf8("to both")], "\(chain)")
            XCTAssertEqual(logged.map(\.position), [0])
        }
    }

    func testThePolicyRefusesNonPositiveBoundsAndTheDefaultIsADay() throws {
        XCTAssertEqual(SendLogPolicy.default.retention, 86_400)
        XCTAssertEqual(SendLogPolicy.default.maximumEntries, 10_000)
        XCTAssertThrowsError(try SendLogPolicy(retention: 0))
        XCTAssertThrowsError(try SendLogPolicy(maximumEntries: 0))
        XCTAssertEqual(try SendLogPolicy(retention: 60, maximumEntries: 2).maximumEntries, 2)
    }

    /// Without `sendLog` nothing is kept, and a notice archives as before with nothing to resend.
    func testTheLogIsOffByDefault() async throws {
        let (alice, bob) = try await pair(seed: 5100, logging: false)
        XCTAssertNil(alice.manager.sendLog)
        await bob.store.deleteSession(for: alice.address)
        let failed = try await bob.manager.receive(try await alice.manager.encryptEnvelope(utf8("lost"), to: bob.address))
        let result = try expectRetryOutcome(try await alice.manager.receive(try expectRetryNotice(failed)))
        guard case .sessionArchived = result.action else { return XCTFail("\(result)") }
        XCTAssertEqual(result.resend, [])
        let count = await alice.store.sendLogCount()
        XCTAssertEqual(count, 0)
    }

    /// Each application message is logged under (recipient, ratchet key) at its counter; the
    /// notice for the current chain returns the whole chain (none of it is known to be read),
    /// names the failed position, and removes the chain's entries with the archive; a replay
    /// returns nothing.
    func testAPairwiseNoticeReturnsTheArchivedChainAndRemovesIt() async throws {
        let (alice, bob) = try await pair(seed: 5110)
        let chain = try await alice.currentChain(to: bob.address)
        for text in ["a0", "a1"] {
            _ = try await bob.manager.receive(try await alice.manager.encryptEnvelope(utf8(text), to: bob.address))
        }
        let logged = await alice.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(logged.map(\.position), [0, 1])
        XCTAssertEqual(logged.map(\.plaintext), [utf8("a0"), utf8("a1")])
        XCTAssertEqual(logged.map(\.expiresAt), Array(repeating: clock.now().adding(seconds: 86_400), count: 2))
        let total = await alice.store.sendLogCount()
        XCTAssertEqual(total, 3, "hello (Alice's first chain) and the two")

        await bob.store.deleteSession(for: alice.address)
        let noticed = try expectRetryNotice(try await bob.manager.receive(try await alice.manager.encryptEnvelope(utf8("a2"), to: bob.address)))
        let result = try expectRetryOutcome(try await alice.manager.receive(noticed))
        guard case .sessionArchived(peerReregistered: false) = result.action else { return XCTFail("\(result)") }
        XCTAssertEqual(result.failedPosition, 2)
        XCTAssertEqual(result.resend.map(\.plaintext), [utf8("a0"), utf8("a1"), utf8("a2")])
        XCTAssertEqual(result.resend.map(\.position), [0, 1, 2])
        XCTAssertEqual(result.resend.filter { $0.position >= result.failedPosition }.map(\.plaintext), [utf8("a2")])
        let after = await alice.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(after, [], "used entries are removed with the archive")
        let remaining = await alice.store.sendLogCount()
        XCTAssertEqual(remaining, 1, "only hello, on a chain Bob answered, until it expires")
        XCTAssertFalse(result.description.contains("a0"))

        let replay = try expectRetryOutcome(try await alice.manager.receive(noticed))
        guard case .ignored = replay.action else { return XCTFail("\(replay)") }
        XCTAssertEqual(replay.resend, [])
        let taken = try await alice.manager.takeLoggedMessages(ofArchivedSessionWith: bob.address)
        XCTAssertEqual(taken, [], "the notice took them already")
    }

    /// Distributions (which hold the chain key) are never logged; group messages are logged by
    /// chain and iteration; a group notice returns the entries from its iteration on and keeps
    /// them; rotating the chain removes its entries.
    func testGroupMessagesAreLoggedByIterationAndDistributionsNever() async throws {
        let (alice, bob) = try await pair(seed: 5120)
        let group = try GroupID("logged club")
        try await alice.manager.setGroupMembers([bob.address], for: group)
        try await bob.manager.setGroupMembers([alice.address], for: group)
        let before = await alice.store.sendLogCount()
        _ = try await alice.manager.distributeSenderKey(for: group, to: [bob.address])
        let afterDistribution = await alice.store.sendLogCount()
        XCTAssertEqual(afterDistribution, before, "a distribution is not logged")
        let loadedChain = await alice.store.loadSendingChain(for: group)
        let chainID = try XCTUnwrap(loadedChain).chainID.rawRepresentation
        for index in 0 ..< 4 { _ = try await alice.manager.groupEncrypt(utf8("g\(index)"), for: group) }
        let chain = SendLogChain.group(group, chainID: chainID)
        let logged = await alice.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(logged.map(\.position), [0, 1, 2, 3])

        let notice = try RetryNotice(
            from: bob.identity, at: bob.address, to: alice.address, recipientIdentityKey: alice.identity.publicKey,
            registrationID: try await bob.manager.localRegistrationID(), failure: .group(group, chainID: chainID, iteration: 2))
        let result = try await alice.manager.processRetryNotice(notice.serialized, from: bob.address)
        guard case .distributionResent = result.action else { return XCTFail("\(result)") }
        XCTAssertEqual(result.failedPosition, 2)
        XCTAssertEqual(result.resend.map(\.plaintext), [utf8("g2"), utf8("g3")])
        let kept = await alice.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(kept.count, 4, "group entries stay for the other members")

        _ = try await alice.manager.rotateSenderKey(for: group)
        let rotated = await alice.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(rotated, [], "the old chain's entries go with it")
    }

    /// The log's changes are applied with the rest of the commit or not at all: a stale commit
    /// leaves no entry.
    func testAStaleCommitWritesNoEntry() async throws {
        let (alice, bob) = try await pair(seed: 5150)
        let loaded = await alice.store.loadSession(for: bob.address)
        var commit = StoreCommit()
        commit.store(try XCTUnwrap(loaded), for: bob.address)
        var changes = SendLogChanges()
        let chain = SendLogChain.pairwise(recipient: bob.address, ratchetKey: [UInt8](repeating: 9, count: 32))
        changes.added = [SendLogEntry(id: 0, chain: chain, position: 0, expiresAt: Timestamp(secondsSince1970: .max), plaintext: [4])]
        commit.sendLog = changes
        try await alice.store.commit(commit)
        let before = await alice.store.sendLogCount()
        await assertThrowsAsync(.staleState) { try await alice.store.commit(commit) }
        let after = await alice.store.sendLogCount()
        XCTAssertEqual(after, before)
        let entries = await alice.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(entries.map(\.plaintext), [[4]])
    }

    /// Entries expire after the retention (they are no longer returned, and the next write
    /// removes them), and only the newest `maximumEntries` stay.
    func testEntriesExpireAndTheLogIsBounded() async throws {
        let (alice, bob) = try await pair(seed: 5130, policy: try SendLogPolicy(retention: 100, maximumEntries: 3))
        let chain = try await alice.currentChain(to: bob.address)
        for index in 0 ..< 5 { _ = try await alice.manager.encrypt(utf8("m\(index)"), to: bob.address) }
        let bounded = await alice.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(bounded.map(\.position), [2, 3, 4])
        let count = await alice.store.sendLogCount()
        XCTAssertEqual(count, 3)
        clock.advance(bySeconds: 99)
        let live = await alice.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(live.count, 3)
        clock.advance(bySeconds: 1)
        let expired = await alice.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(expired, [])
        _ = try await alice.manager.encrypt(utf8("m5"), to: bob.address)
        let afterWrite = await alice.store.sendLogCount()
        XCTAssertEqual(afterWrite, 1, "the write removed the expired entries")
    }

    /// A log kept apart from the store (here the device's in-memory store behind a forwarding
    /// store, so not the same object) is written right after each commit and still serves the
    /// notice; after a device-list mismatch, the archived chain's messages are taken once, when
    /// the new session exists.
    func testALogApartFromTheStoreAndTakingAfterADeviceListMismatch() async throws {
        let clock = FakeClock()
        let alice = try await TestDevice("alice", 1, seed: 5140, server: server, clock: clock)
        let bob = try await TestDevice("bob", 1, seed: 5141, server: server, clock: clock)
        let logging = SessionManager(
            store: alice.store, trust: alice.trust, localAddress: alice.address, clock: clock, sendLog: alice.base)
        XCTAssertFalse(logging.sendLogInCommits)
        try await logging.processBundle(try await server.requireBundle(for: bob.address), for: bob.address)
        for text in ["x0", "x1"] {
            _ = try await bob.manager.receive(try await logging.encryptEnvelope(utf8(text), to: bob.address))
        }
        let logged = await alice.base.sendLogCount()
        XCTAssertEqual(logged, 2)
        try await logging.applyDeviceListMismatch(DeviceListMismatch(stale: [1]), forUser: "bob")
        let early = try await logging.takeLoggedMessages(ofArchivedSessionWith: bob.address)
        XCTAssertEqual(early, [], "nothing before a new session exists (its key is not known yet)")
        let kept = await alice.base.sendLogCount()
        XCTAssertEqual(kept, 2, "and nothing was removed")
        try await logging.processBundle(try await server.requireBundle(for: bob.address), for: bob.address)
        let taken = try await logging.takeLoggedMessages(ofArchivedSessionWith: bob.address)
        XCTAssertEqual(taken.map(\.plaintext), [utf8("x0"), utf8("x1")])
        XCTAssertEqual(taken.map(\.chain), Array(repeating: taken[0].chain, count: 2))
        let again = try await logging.takeLoggedMessages(ofArchivedSessionWith: bob.address)
        XCTAssertEqual(again, [], "taken once")
        let left = await alice.base.sendLogCount()
        XCTAssertEqual(left, 0)
    }

    /// The app can forget what the log holds for a user (every device, every key) or a group,
    /// for a conversation the user deleted or whose timer ran out.
    func testForgettingAUsersAndAGroupsLoggedMessages() async throws {
        let alice = try await LoggingTestDevice("alice", 1, seed: 5300, server: server, clock: clock)
        let bob = try await LoggingTestDevice("bob", 1, seed: 5301, server: server, clock: clock)
        let carol = try await LoggingTestDevice("carol", 1, seed: 5302, server: server, clock: clock)
        for peer in [bob, carol] { try await alice.startSession(with: peer.address, server: server) }
        _ = try await alice.manager.encrypt(utf8("to bob"), to: bob.address)
        _ = try await alice.manager.encrypt(utf8("to carol"), to: carol.address)
        let group = try GroupID("forgotten")
        try await alice.manager.setGroupMembers([bob.address], for: group)
        _ = try await alice.manager.senderKeyDistributionMessage(for: group)
        _ = try await alice.manager.groupEncrypt(utf8("to the group"), for: group)
        let all = await alice.store.sendLogCount()
        XCTAssertEqual(all, 3)
        try await alice.manager.forgetLoggedMessages(toUser: "bob")
        let bobChain = try await alice.currentChain(to: bob.address)
        let bobs = await alice.store.loadSendLog(for: bobChain, now: clock.now())
        XCTAssertEqual(bobs, [])
        let carolChain = try await alice.currentChain(to: carol.address)
        let carols = await alice.store.loadSendLog(for: carolChain, now: clock.now())
        XCTAssertEqual(carols.map(\.plaintext), [utf8("to carol")], "another user's stay")
        try await alice.manager.forgetLoggedMessages(inGroup: group)
        let left = await alice.store.sendLogCount()
        XCTAssertEqual(left, 1, "only Carol's")
    }
}
