import Foundation
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import Verification
import XCTest

/// Issue 19's recovery scenarios end to end through `SessionManager` on `SQLiteProtocolStore`
/// files, each store its manager's trust store and send log (SPEC §9): a lost session row, a
/// chain wedged past MAX_SKIP, a group member that never got the distribution, a flood of forged
/// and replayed notices, and a peer that reinstalled with a new identity.
final class RecoveryScenarioTests: XCTestCase {
    private let alice = address("alice", 1)
    private let bob = address("bob", 1)
    private let clock = FakeClock(Timestamp(secondsSince1970: 1_800_000_000))

    /// A device on its own file, its store also its trust store and its send log.
    private struct Device {
        let address: ProtocolAddress
        let store: SQLiteProtocolStore
        let manager: SessionManager

        init(_ address: ProtocolAddress, path: String, clock: FakeClock, identity: IdentityKeyPair? = nil) throws {
            self.address = address
            store = try SQLiteProtocolStore(
                path: path, storageKey: try fixtureStorageKey(), identity: identity, options: SQLiteStoreOptions(durability: .processCrash))
            manager = SessionManager(store: store, trust: store, localAddress: address, clock: clock, sendLog: store)
        }

        func send(_ text: String, to peer: ProtocolAddress) async throws -> MessageEnvelope {
            try await manager.encryptEnvelope(Array(text.utf8), to: peer)
        }
    }

    private func path(_ name: String, in folder: URL) -> String { folder.appendingPathComponent("\(name).sqlite").path }

    /// Alice and Bob on files in `folder`, with Bob's prekeys as his server keeps them, and a
    /// session both ways (Alice has read Bob's reply, so her next message starts a new chain).
    private func pair(in folder: URL) async throws -> (Device, Device, PublishedPreKeys) {
        let a = try Device(alice, path: path("alice", in: folder), clock: clock)
        let b = try Device(bob, path: path("bob", in: folder), clock: clock)
        var published = try PublishedPreKeys(registering: try await b.manager.maintainPreKeys())
        try await a.manager.processBundle(published.takeBundle(), for: bob)
        let hello = try await b.manager.receive(try await a.send("hello", to: bob))
        XCTAssertEqual(hello.plaintext, Array("hello".utf8))
        let hi = try await a.manager.receive(try await b.send("hi", to: alice))
        XCTAssertEqual(hi.plaintext, Array("hi".utf8))
        return (a, b, published)
    }

    private func notice(_ received: ReceivedMessage, _ expected: SessionError, file: StaticString = #filePath, line: UInt = #line) throws -> MessageEnvelope {
        guard case let .undecryptable(failure) = received else {
            XCTFail("expected an undecryptable message, got \(received)", file: file, line: line)
            throw XCTSkip("no notice")
        }
        XCTAssertEqual(failure.error, expected, file: file, line: line)
        return try XCTUnwrap(failure.retryNotice, "no notice due", file: file, line: line)
    }

    private func outcome(_ received: ReceivedMessage, file: StaticString = #filePath, line: UInt = #line) throws -> RetryNoticeOutcome {
        guard case let .retryNotice(outcome) = received else {
            XCTFail("expected a retry-notice outcome, got \(received)", file: file, line: line)
            throw XCTSkip("no outcome")
        }
        return outcome
    }

    // MARK: Scenario 3

    /// Bob loses his session row for Alice: her next message is `noSession` at Bob; his notice
    /// makes Alice (after a restart: the log is in her file) archive the session and hand back
    /// the logged message; she starts a new session from Bob's bundle, sends it again, and Bob
    /// reads it in the new session.
    func testScenario3ALostSessionRowIsRepairedAndTheMessageResentFromTheLog() async throws {
        let folder = try temporaryFolder()
        var (a, b, published) = try await pair(in: folder)
        defer { try? b.store.close() }
        try await b.store.deleteSession(for: alice)
        let noticed = try notice(try await b.manager.receive(try await a.send("lost in the old session", to: bob)), .noSession)

        try a.store.close()
        a = try Device(alice, path: path("alice", in: folder), clock: clock)
        defer { try? a.store.close() }
        let result = try outcome(try await a.manager.receive(noticed))
        guard case .sessionArchived(peerReregistered: false) = result.action else { return XCTFail("\(result)") }
        XCTAssertEqual(result.resend.map(\.plaintext), [Array("lost in the old session".utf8)])
        XCTAssertEqual(result.resend.map(\.position), [result.failedPosition])
        let chain = try XCTUnwrap(result.resend.first?.chain)
        let left = try await a.store.loadSendLog(for: chain, now: clock.now())
        XCTAssertEqual(left, [], "the used entries are deleted")

        try await a.manager.processBundle(published.takeBundle(), for: bob)
        for entry in result.resend {
            let received = try await b.manager.receive(try await a.manager.encryptEnvelope(entry.plaintext, to: bob))
            guard case let .message(message) = received else { return XCTFail("\(received)") }
            XCTAssertEqual(message.plaintext, Array("lost in the old session".utf8))
            XCTAssertTrue(message.establishedSession, "read in a new session")
        }
        let reply = try await a.manager.receive(try await b.send("got it", to: alice))
        XCTAssertEqual(reply.plaintext, Array("got it".utf8))
    }

    // MARK: Scenario 4

    /// A chain wedged past MAX_SKIP: of 300 messages Alice sends, Bob receives only the last,
    /// which is `tooManySkippedMessages` (299 skipped > 256). His notice makes Alice archive the
    /// session and hand back all 300 from the log (none is known to have been read: Bob never
    /// answered on that chain); she sends them again in a new session, and Bob reads each exactly
    /// once (a redelivery is a duplicate).
    func testScenario4AChainWedgedPastMaxSkipIsResentWholeInANewSession() async throws {
        let folder = try temporaryFolder()
        let (a, b, published) = try await pair(in: folder)
        var published2 = published
        defer { try? a.store.close(); try? b.store.close() }
        let texts = (0 ..< 300).map { "message \($0)" }
        var last: MessageEnvelope?
        for text in texts { last = try await a.send(text, to: bob) }
        let noticed = try notice(try await b.manager.receive(try XCTUnwrap(last)), .tooManySkippedMessages)

        let result = try outcome(try await a.manager.receive(noticed))
        guard case .sessionArchived = result.action else { return XCTFail("\(result)") }
        XCTAssertEqual(result.failedPosition, 299)
        XCTAssertEqual(result.resend.count, 300)
        XCTAssertEqual(result.resend.map(\.position), (0 ..< 300).map { UInt32($0) })
        XCTAssertEqual(result.resend.map { String(decoding: $0.plaintext, as: UTF8.self) }, texts)

        try await a.manager.processBundle(published2.takeBundle(), for: bob)
        var read: [String] = []
        var envelopes: [MessageEnvelope] = []
        for entry in result.resend {
            let envelope = try await a.manager.encryptEnvelope(entry.plaintext, to: bob)
            envelopes.append(envelope)
            let received = try await b.manager.receive(envelope)
            read.append(String(decoding: try XCTUnwrap(received.plaintext), as: UTF8.self))
        }
        XCTAssertEqual(read, texts, "each read once, in order")
        let redelivered = await thrownError { _ = try await b.manager.receive(envelopes[150]) }
        XCTAssertEqual(redelivered as? SessionError, .duplicateMessage)
        let remaining = try await a.store.loadSendLog(for: try XCTUnwrap(result.resend.first?.chain), now: clock.now())
        XCTAssertEqual(remaining, [])
    }

    // MARK: Scenario 5

    /// A member that never got the distribution keeps the group messages; after its wait, its
    /// notice makes the sender send its current distribution again, and hand back from the log
    /// the messages the member kept. The current distribution holds the chain key at iteration
    /// 3 only (SPEC §9: "its current distribution"; no earlier key is kept), so the kept
    /// messages (iterations 0–2) cannot decrypt with it and are dropped when it arrives; their
    /// plaintexts reach the member pairwise from the log, and the chain works from then on.
    func testScenario5AMemberWithoutTheDistributionGetsItAndTheKeptMessagesArriveFromTheLog() async throws {
        let folder = try temporaryFolder()
        let (a, b, _) = try await pair(in: folder)
        defer { try? a.store.close(); try? b.store.close() }
        let group = try GroupID("scenario five")
        try await a.manager.setGroupMembers([bob], for: group)
        try await b.manager.setGroupMembers([alice], for: group)
        _ = try await a.manager.senderKeyDistributionMessage(for: group)   // never reaches Bob
        for text in ["g0", "g1"] {
            let sent = try await a.manager.groupEncryptEnvelope(Array(text.utf8), for: group)
            let error = await thrownError { _ = try await b.manager.receive(sent) }
            XCTAssertEqual(error as? SessionError, .unknownChain, "kept, no notice before the wait")
        }
        clock.advance(bySeconds: SessionManager.distributionWait)
        let third = try await a.manager.groupEncryptEnvelope(Array("g2".utf8), for: group)
        let noticed = try notice(try await b.manager.receive(third), .unknownChain)

        let result = try outcome(try await a.manager.receive(noticed))
        guard case let .distributionResent(encryption) = result.action else { return XCTFail("\(result)") }
        XCTAssertEqual(result.failedPosition, 0, "the oldest kept message")
        XCTAssertEqual(result.resend.map(\.plaintext), ["g0", "g1", "g2"].map { Array($0.utf8) })
        let received = try await b.manager.receive(try XCTUnwrap(encryption.envelope))
        guard case let .senderKeyDistribution(_, _, _, released, _) = received else { return XCTFail("\(received)") }
        XCTAssertEqual(released.map(\.plaintext), [], "before the distribution's iteration: not decryptable with it")
        let kept = try await b.store.loadPendingGroupMessages(for: group, sender: alice)
        XCTAssertEqual(kept, [], "and dropped")
        var delivered: [[UInt8]] = []
        for entry in result.resend {
            let resent = try await b.manager.receive(try await a.manager.encryptEnvelope(entry.plaintext, to: bob))
            delivered.append(try XCTUnwrap(resent.plaintext))
        }
        XCTAssertEqual(delivered, ["g0", "g1", "g2"].map { Array($0.utf8) }, "the kept messages' contents, from the log")
        let next = try await b.manager.receive(try await a.manager.groupEncryptEnvelope(Array("g3".utf8), for: group))
        XCTAssertEqual(next.plaintext, Array("g3".utf8))
    }

    // MARK: Scenario 6

    /// A thousand forged and replayed notices: one reset in the hour. The work is counted, not
    /// timed: a forgery touches the store not at all (it fails its MAC first), a replay reads one
    /// record and writes nothing; only the one reset writes.
    func testScenario6AFloodOfForgedAndReplayedNoticesResetsOnceAnHourWithBoundedWork() async throws {
        let folder = try temporaryFolder()
        let aliceStore = try SQLiteProtocolStore(path: path("alice", in: folder), storageKey: try fixtureStorageKey())
        let b = try Device(bob, path: path("bob", in: folder), clock: clock)
        defer { try? aliceStore.close(); try? b.store.close() }
        let counting = CountingStore(base: aliceStore)
        let manager = SessionManager(store: counting, trust: aliceStore, localAddress: alice, clock: clock, sendLog: aliceStore)
        var published = try PublishedPreKeys(registering: try await b.manager.maintainPreKeys())
        try await manager.processBundle(published.takeBundle(), for: bob)
        let bobIdentity = try await b.store.localIdentity()
        let bobRegistration = try await b.manager.localRegistrationID()
        let aliceKey = try await aliceStore.localIdentity().publicKey

        /// A genuine notice from Bob for the chain Alice sends on now (from her next message).
        func genuineNotice() async throws -> [UInt8] {
            let probe = try await manager.encrypt(Array("probe".utf8), to: bob)
            let header: RatchetMessage = switch try IncomingMessage(serialized: probe) {
            case let .ratchet(message): message
            case let .preKey(message): message.message
            }
            return try RetryNotice(
                from: bobIdentity, at: bob, to: alice, recipientIdentityKey: aliceKey, registrationID: bobRegistration,
                failure: .pairwise(ratchetKey: header.ratchetKey.rawRepresentation, counter: header.counter)).serialized
        }
        var random = SplitMix64(seed: 19_006)
        var actions: [String: Int] = [:]
        func flood(_ genuine: [UInt8], count: Int) async {
            for index in 0 ..< count {
                var bytes = genuine
                if index % 2 == 1 {
                    let position = Int(random.next() % UInt64(bytes.count))
                    bytes[position] ^= UInt8(truncatingIfNeeded: random.next()) | 1
                }
                do {
                    let action = try await manager.processRetryNotice(bytes, from: bob).action
                    let name = switch action {
                    case .sessionArchived: "archived"
                    case .rateLimited: "rateLimited"
                    case .ignored: "ignored"
                    default: "other"
                    }
                    actions[name, default: 0] += 1
                } catch {
                    actions["refused", default: 0] += 1
                }
            }
        }

        // The first 500: one genuine notice replayed 250 times among 250 forgeries.
        let first = try await genuineNotice()
        await counting.reset()
        await flood(first, count: 500)
        var counts = await counting.counts()
        XCTAssertEqual(actions, ["archived": 1, "ignored": 249, "refused": 250])
        XCTAssertEqual(counts.commits, 1, "only the reset wrote")
        XCTAssertLessThanOrEqual(counts.sessionLoads, 250, "one read per replay, none per forgery")

        // A new session within the hour, and a genuine notice for its chain: not acted on.
        try await manager.processBundle(published.takeBundle(), for: bob)
        let second = try await genuineNotice()
        actions = [:]
        await counting.reset()
        await flood(second, count: 500)
        counts = await counting.counts()
        XCTAssertEqual(actions, ["rateLimited": 250, "refused": 250])
        XCTAssertEqual(counts.commits, 0)
        XCTAssertLessThanOrEqual(counts.sessionLoads, 250)
        _ = try await manager.encrypt(Array("still current".utf8), to: bob)

        // An hour after the reset, the same genuine notice acts again.
        clock.advance(bySeconds: 3600)
        guard case .sessionArchived = try await manager.processRetryNotice(second, from: bob).action else {
            return XCTFail("the hour passed")
        }
    }

    // MARK: Scenario 1

    /// Bob reinstalls with a new identity: Alice's next send is refused by the relay's
    /// `DeviceDirectory` as stale; she applies the mismatch (archiving the session), fetches the
    /// new bundle, which is `untrustedIdentity` until she accepts the new key, then sends the
    /// refused message again, which Bob reads, and the safety number changed. The send log
    /// hands nothing of the old key's chain to the new key (SPEC §9: a device that comes back
    /// under a new key is a new party to the messages it never had, whoever accepted the key).
    func testScenario1APeerReinstalledWithANewIdentityIsReachedAgainWithTheRefusedMessage() async throws {
        let folder = try temporaryFolder()
        let (a, b, old) = try await pair(in: folder)
        defer { try? a.store.close() }
        var directory = DeviceDirectory([1: old])
        let generator = try FingerprintGenerator(iterations: 2)
        let aliceKey = try await a.store.localIdentity().publicKey
        func safetyNumber() async throws -> String {
            let recorded = try await a.store.record(forUser: "bob")
            return generator.fingerprint(
                version: 2, localUserID: "alice", localIdentityKey: aliceKey, remoteUserID: "bob",
                remoteIdentityKey: try XCTUnwrap(recorded?.identityKey)).displayable.digits
        }
        let before = try await safetyNumber()

        // Bob reinstalls: a new file, a new identity, a new registration id, published again.
        try b.store.close()
        let reinstalled = try Device(bob, path: path("bob-reinstalled", in: folder), clock: clock)
        defer { try? reinstalled.store.close() }
        var published = try PublishedPreKeys(registering: try await reinstalled.manager.maintainPreKeys())
        directory.register(1, registrationID: published.registrationID)

        // Alice sends; the relay refuses the message (it is never delivered).
        let refused = try await a.send("are you there?", to: bob)
        XCTAssertEqual(refused.recipient, bob)
        let mismatch = try directory.check(try await a.manager.deviceListRequest(forUser: "bob"), excludingSenderDevice: nil)
        XCTAssertEqual(mismatch, DeviceListMismatch(stale: [1]))
        let toFetch = try await a.manager.applyDeviceListMismatch(mismatch, forUser: "bob")
        XCTAssertEqual(toFetch, [1])
        // The log hands out nothing while no session under a known key exists.
        let early = try await a.manager.takeLoggedMessages(ofArchivedSessionWith: bob)
        XCTAssertEqual(early, [])

        let bundle = published.takeBundle()
        let untrusted = await thrownError { try await a.manager.processBundle(bundle, for: self.bob) }
        XCTAssertEqual(untrusted as? SessionError, .untrustedIdentity)
        try await a.manager.acceptIdentityChange(bundle.identityKey, forUser: "bob")
        try await a.manager.processBundle(bundle, for: bob)
        let logged = try await a.manager.takeLoggedMessages(ofArchivedSessionWith: bob)
        XCTAssertEqual(logged, [], "nothing sent under the old key goes to the new one")

        // The app sends its refused message again (it knows it was never delivered).
        let received = try await reinstalled.manager.receive(try await a.manager.encryptEnvelope(Array("are you there?".utf8), to: bob))
        XCTAssertEqual(received.plaintext, Array("are you there?".utf8))
        let answer = try await a.manager.receive(try await reinstalled.send("yes, new phone", to: alice))
        XCTAssertEqual(answer.plaintext, Array("yes, new phone".utf8))
        let request = try await a.manager.deviceListRequest(forUser: "bob")
        XCTAssertTrue(try directory.check(request, excludingSenderDevice: nil).isEmpty)
        let after = try await safetyNumber()
        XCTAssertNotEqual(after, before, "the safety number changes with Bob's identity")
    }
}

/// A store that forwards to a `SQLiteProtocolStore` and counts the session reads and the
/// commits a manager makes through it.
private actor CountingStore: ForwardingProtocolStore {
    nonisolated let base: SQLiteProtocolStore
    private var sessionLoads = 0
    private var commits = 0

    init(base: SQLiteProtocolStore) { self.base = base }

    func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord? {
        sessionLoads += 1
        return try await base.loadSession(for: address)
    }

    func commit(_ commit: StoreCommit) async throws(SessionError) {
        commits += 1
        try await base.commit(commit)
    }

    func reset() { (sessionLoads, commits) = (0, 0) }

    func counts() -> (sessionLoads: Int, commits: Int) { (sessionLoads, commits) }
}
