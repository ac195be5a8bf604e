import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// State that can never roll back: every record and chain carries a store generation, stores
/// compare and swap it (`ProtocolStore.commit`), `promote` refuses an older copy of a session,
/// and `SessionManager` retries a stale commit from the fresh state. Two managers on one store
/// stand in for two processes on one database (an app and its notification extension).
final class StoreGenerationTests: XCTestCase {
    // MARK: The store contract

    func testTheInMemoryStoreRefusesAStaleRecordAndChangesNothing() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 901, server: server)
        let bob = try await TestDevice("bob", 1, seed: 902, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let loaded = await alice.base.loadSession(for: bob.address)
        let stale = try XCTUnwrap(loaded)
        XCTAssertEqual(stale.generation, 1, "one commit so far (the session from the bundle)")

        _ = try await alice.manager.encrypt(utf8("advances the record"), to: bob.address)
        let current = await alice.base.loadSession(for: bob.address)
        XCTAssertEqual(current?.generation, 2)
        let before = await alice.snapshot()

        // Writing back the copy loaded before the encryption (as a second process, a restored
        // backup or an old value would) is refused, whatever else the commit carries.
        var commit = StoreCommit()
        commit.store(stale, for: bob.address)
        await assertThrowsAsync(.staleState) { try await alice.base.commit(commit) }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before, "a refused commit changes nothing")

        // A new record (generation 0) cannot replace a stored one either.
        var fresh = StoreCommit()
        fresh.store(SessionRecord(), for: bob.address)
        await assertThrowsAsync(.staleState) { try await alice.base.commit(fresh) }

        // The current copy commits, and its generation advances by one.
        var good = StoreCommit()
        good.store(try XCTUnwrap(current), for: bob.address)
        try await alice.base.commit(good)
        let advanced = await alice.base.loadSession(for: bob.address)
        XCTAssertEqual(advanced?.generation, 3)
    }

    func testACopyFromBeforeADeletionNeverMatchesTheRecordCreatedAfterIt() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 930, server: server)
        let bob = try await TestDevice("bob", 1, seed: 931, server: server)
        try await alice.startSession(with: bob.address, server: server)
        for index in 0 ..< 3 { _ = try await alice.manager.encrypt(utf8("old \(index)"), to: bob.address) }
        let loaded = await alice.base.loadSession(for: bob.address)
        let old = try XCTUnwrap(loaded)
        XCTAssertEqual(old.generation, 4)
        await alice.base.deleteSession(for: bob.address)
        // A new session, and as many commits as the old record had: the generations go on from
        // above the deleted record's, so the old copy never matches again.
        try await alice.startSession(with: bob.address, server: server)
        for index in 0 ..< 6 {
            var commit = StoreCommit()
            commit.store(old, for: bob.address)
            await assertThrowsAsync(.staleState) { try await alice.base.commit(commit) }
            _ = try await alice.manager.encrypt(utf8("new \(index)"), to: bob.address)
        }
        let current = await alice.base.loadSession(for: bob.address)
        XCTAssertEqual(current?.generation, 11, "5 (first after the deletion) + 6 commits")
    }

    func testAStaleCommitDoesNotApplyItsPreKeyConsumption() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 903, server: server)
        let bob = try await TestDevice("bob", 1, seed: 904, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("first"), to: bob.address)
        // Bob decrypts the prekey message on a copy of his record, as a second process would,
        // while his manager commits first.
        let loaded = await bob.base.loadSession(for: alice.address)
        var record = loaded ?? SessionRecord()
        let keysBefore = try await bob.storedPreKeys()
        let incoming = try IncomingMessage(serialized: message)
        guard case let .preKey(preKeyMessage) = incoming else { return XCTFail("a prekey message") }
        let decryption = try record.decrypt(
            incoming, identity: bob.identity, localAddress: bob.address, remoteAddress: alice.address,
            preKeys: keysBefore.preKeySet(for: preKeyMessage.prefix), kem: nil, random: SeededRandomSource(seed: 1))
        XCTAssertNotNil(decryption.consumption, "the copy ran X3DH")
        _ = try await bob.manager.decrypt(message, from: alice.address)
        let before = await bob.snapshot()
        var commit = StoreCommit()
        commit.store(record, for: alice.address)
        commit.preKeyConsumption = decryption.consumption
        await assertThrowsAsync(.staleState) { try await bob.base.commit(commit) }
        let after = await bob.snapshot()
        XCTAssertEqual(after, before)
    }

    func testSenderKeyChainsAreComparedAndSwappedToo() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 905, server: server)
        let group = try GroupID("generations")
        _ = try await alice.manager.senderKeyDistributionMessage(for: group)
        let loaded = await alice.base.loadSendingChain(for: group)
        let stale = try XCTUnwrap(loaded)
        _ = try await alice.manager.groupEncrypt(utf8("advances the chain"), for: group)
        var commit = StoreCommit()
        commit.store(stale, for: group)
        await assertThrowsAsync(.staleState) { try await alice.base.commit(commit) }
        let current = await alice.base.loadSendingChain(for: group)
        XCTAssertEqual(current?.generation, 2)
        XCTAssertEqual(current?.iteration, 1, "the stale chain (iteration 0) was not written back")
    }

    // MARK: promote

    func testPromoteRefusesAnOlderCopyOfAHeldSession() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 906, server: server)
        let bob = try await TestDevice("bob", 1, seed: 907, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let loaded = await alice.base.loadSession(for: bob.address)
        let old = try XCTUnwrap(loaded?.currentSession)
        _ = try await alice.manager.encrypt(utf8("one"), to: bob.address)
        let advancedRecord = await alice.base.loadSession(for: bob.address)
        var record = try XCTUnwrap(advancedRecord)
        let held = try XCTUnwrap(record.currentSession)
        XCTAssertEqual(held.generation, old.generation + 1, "encrypting advanced the session's generation")
        let blob = record.serialized()

        XCTAssertThrowsError(try record.promote(old)) { XCTAssertEqual($0 as? SessionError, .staleState) }
        XCTAssertEqual(record.serialized(), blob, "a refused promote changes nothing")
        // The same copy, or a newer one, is accepted.
        try record.promote(held)
        XCTAssertEqual(record.serialized(), blob)
        // A session's generation survives persistence.
        XCTAssertEqual(try SessionState(serialized: held.serialized()).generation, held.generation)
    }

    // MARK: Two writers on one store

    func testTwoManagersOnOneStoreNeverReuseAMessageKey() async throws {
        // Two managers on one store do not share locks (like two processes on one database):
        // their commits race, and the loser retries from the fresh record.
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 908, server: server)
        let bob = try await TestDevice("bob", 1, seed: 909, server: server)
        try await alice.startSession(with: bob.address, server: server)
        await alice.store.setYields(true)    // interleave the two managers' loads and commits
        let second = SessionManager(store: alice.store, trust: alice.trust, localAddress: alice.address,
                                    random: SeededRandomSource(seed: 910))
        let messages = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for index in 0 ..< 40 {
                let manager = index.isMultiple(of: 2) ? alice.manager : second
                group.addTask { try await manager.encrypt(utf8("message \(index)"), to: bob.address) }
            }
            var messages: [[UInt8]] = []
            for try await message in group { messages.append(message) }
            return messages
        }
        // Every message used its own (ratchet key, counter), and each decrypts exactly once.
        let slots = try messages.map { (bytes: [UInt8]) -> [UInt8] in
            let message = try IncomingMessage(serialized: bytes).ratchetMessage
            return message.ratchetKey.rawRepresentation + withUnsafeBytes(of: message.counter.bigEndian, Array.init)
        }
        XCTAssertEqual(Set(slots).count, 40, "no (ratchet key, counter) was used twice")
        var received: Set<String> = []
        for message in messages {
            let plaintext = try await bob.manager.decrypt(message, from: alice.address).plaintext
            received.insert(String(decoding: plaintext, as: UTF8.self))
        }
        XCTAssertEqual(received, Set((0 ..< 40).map { "message \($0)" }))
        let record = await alice.base.loadSession(for: bob.address)
        XCTAssertEqual(record?.generation, 41, "one commit per message, plus the session's creation")
    }

    func testTwoManagersOnOneStoreDecryptEachMessageOnce() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 911, server: server)
        let bob = try await TestDevice("bob", 1, seed: 912, server: server)
        try await alice.startSession(with: bob.address, server: server)
        var messages: [[UInt8]] = []
        for index in 0 ..< 20 { messages.append(try await alice.manager.encrypt(utf8("m\(index)"), to: bob.address)) }
        await bob.store.setYields(true)
        let second = SessionManager(store: bob.store, trust: bob.trust, localAddress: bob.address,
                                    random: SeededRandomSource(seed: 913))
        // Both "processes" receive every message (a push to the extension and to the app).
        let outcomes = await withTaskGroup(of: Result<[UInt8], SessionError>.self) { group in
            for message in messages {
                for manager in [bob.manager, second] {
                    group.addTask { await capture { () async throws(SessionError) -> [UInt8] in
                        try await manager.decrypt(message, from: alice.address).plaintext
                    } }
                }
            }
            var outcomes: [Result<[UInt8], SessionError>] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let plaintexts = outcomes.compactMap { try? $0.get() }.map { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(plaintexts.count, 20, "each message decrypted exactly once")
        XCTAssertEqual(Set(plaintexts), Set((0 ..< 20).map { "m\($0)" }))
        for case let .failure(error) in outcomes {
            XCTAssertEqual(error, .duplicateMessage, "the other copy of each message is a duplicate")
        }
    }

    func testAFailureOnARecordAnotherWriterChangedMeanwhileIsJudgedOnTheFreshRecord() async throws {
        // Bob's manager loads his record, and before it decrypts, another process commits a
        // newer one (here: the store serves the older copy once). The message needs the newer
        // record: decrypted on the old one it looks like a replay (its EK_A is recorded). The
        // manager must not report that, but decrypt it again on the fresh record.
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 920, server: server)
        let bob = try await TestDevice("bob", 1, seed: 921, server: server)
        let store = ScriptedStore(base: bob.base)
        let manager = SessionManager(store: store, trust: bob.trust, localAddress: bob.address, random: SeededRandomSource(seed: 922))
        try await alice.startSession(with: bob.address, server: server)
        _ = try await manager.decrypt(try await alice.manager.encrypt(utf8("first"), to: bob.address), from: alice.address)
        let older = await bob.base.loadSession(for: alice.address)
        // Alice starts a new session (no one-time prekey left to hand out is fine).
        let published = await server.bundle(for: bob.address, consumingOneTimePreKey: false)
        let bundle = try XCTUnwrap(published)
        try await alice.manager.processBundle(bundle, for: bob.address)
        _ = try await manager.decrypt(try await alice.manager.encrypt(utf8("new session"), to: bob.address), from: alice.address)
        let second = try await alice.manager.encrypt(utf8("second on the new session"), to: bob.address)
        await store.serveOnce(try XCTUnwrap(older), for: alice.address)
        let decrypted = try await manager.decrypt(second, from: alice.address)
        XCTAssertEqual(decrypted.plaintext, utf8("second on the new session"))
        let served = await store.servedStale
        XCTAssertTrue(served, "the older copy was used first")
    }

    func testAMessageTheOtherManagerDecryptedIsInvalidOnceTheSessionMovedToANewChain() async throws {
        // Found by the two-process test (SessionKitSQLiteProcessTests): an extension that is
        // behind the app gets a message the app decrypted before the conversation's next ratchet
        // step as `invalidMessage` (the documented case), not `duplicateMessage`.
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 917, server: server)
        let bob = try await TestDevice("bob", 1, seed: 918, server: server)
        try await alice.startSession(with: bob.address, server: server)
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("hello"), to: bob.address), from: alice.address)
        let extensionManager = SessionManager(store: alice.store, trust: alice.trust, localAddress: alice.address,
                                              random: SeededRandomSource(seed: 919))
        let first = try await bob.manager.encrypt(utf8("first chain"), to: alice.address)
        _ = try await alice.manager.decrypt(first, from: bob.address)
        await assertThrowsAsync(.duplicateMessage) { try await extensionManager.decrypt(first, from: bob.address) }
        // A round trip: Bob's next message comes from his next ratchet key.
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("reply"), to: bob.address), from: alice.address)
        let second = try await bob.manager.encrypt(utf8("second chain"), to: alice.address)
        _ = try await alice.manager.decrypt(second, from: bob.address)
        let before = await alice.snapshot()
        await assertThrowsAsync(.invalidMessage) { try await extensionManager.decrypt(first, from: bob.address) }
        await assertThrowsAsync(.duplicateMessage) { try await extensionManager.decrypt(second, from: bob.address) }
        let after = await alice.snapshot()
        XCTAssertEqual(after, before, "neither failure changed anything")
    }

    func testAManagerGivesUpWithStaleStateWhenEveryRetryIsStale() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 914, server: server)
        let bob = try await TestDevice("bob", 1, seed: 915, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let store = ScriptedStore(base: alice.base, refusesEveryCommit: true)
        let manager = SessionManager(store: store, trust: alice.trust, localAddress: alice.address,
                                     random: SeededRandomSource(seed: 916))
        let before = await alice.snapshot()
        await assertThrowsAsync(.staleState) { try await manager.encrypt(utf8("never sent"), to: bob.address) }
        let attempts = await store.commits
        XCTAssertEqual(attempts, SessionManager.staleStateRetries + 1, "the first attempt and every retry")
        let after = await alice.snapshot()
        XCTAssertEqual(after, before)
    }

    func testAFailedCommitRecordsNoIdentity() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 917, server: server)
        let bob = try await TestDevice("bob", 1, seed: 918, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("first"), to: bob.address)
        await bob.store.setFailWrites(true)
        await assertThrowsAsync(.storage("injected write failure")) { try await bob.manager.decrypt(message, from: alice.address) }
        let recorded = await bob.trust.key(for: alice.address)
        XCTAssertNil(recorded, "the identity is recorded only once the state was committed")
        await bob.store.setFailWrites(false)
        let decrypted = try await bob.manager.decrypt(message, from: alice.address)
        XCTAssertEqual(decrypted.identityObservation, .firstUse)
        let recordedNow = await bob.trust.key(for: alice.address)
        XCTAssertEqual(recordedNow, alice.identity.publicKey)
    }
}

/// A store that plays another writer on the same store: it can refuse every commit as stale
/// (another writer always got there first), and serve an older copy of a record once (as if
/// another process committed a newer one between this process's load and its decryption).
/// Everything else goes to `base`.
actor ScriptedStore: ForwardingProtocolStore {
    nonisolated let base: InMemoryProtocolStore
    private let refusesEveryCommit: Bool
    private var stale: [ProtocolAddress: SessionRecord] = [:]
    private(set) var commits = 0
    private(set) var servedStale = false

    init(base: InMemoryProtocolStore, refusesEveryCommit: Bool = false) {
        self.base = base
        self.refusesEveryCommit = refusesEveryCommit
    }

    func serveOnce(_ record: SessionRecord, for address: ProtocolAddress) { stale[address] = record }

    func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord? {
        if let record = stale.removeValue(forKey: address) {
            servedStale = true
            return record
        }
        return await base.loadSession(for: address)
    }

    func commit(_ commit: StoreCommit) async throws(SessionError) {
        commits += 1
        if refusesEveryCommit { throw .staleState }
        try await base.commit(commit)
    }
}
