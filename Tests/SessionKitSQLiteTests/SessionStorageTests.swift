import Foundation
import GRDB
@_spi(Testing) @_spi(Storage) import SessionKit
@_spi(Storage) @testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// Sessions and sender keys in the SQLite store, driven through `SessionManager` (the store is
/// also the manager's trust store): conversations across restarts, one transaction per
/// operation, generations that refuse stale writes (also from a second store on the same file,
/// as a second process would be), per-part storage, damaged values, and the schema-1 file.
final class SessionStorageTests: XCTestCase {
    /// One device on an SQLite file, its store also its trust store.
    struct Device {
        let address: ProtocolAddress
        let store: SQLiteProtocolStore
        let manager: SessionManager

        init(_ address: ProtocolAddress, path: String, identity: IdentityKeyPair? = nil) throws {
            self.address = address
            let options = SQLiteStoreOptions(durability: .processCrash)
            store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), identity: identity, options: options)
            manager = SessionManager(store: store, trust: store, localAddress: address)
        }

        /// A bundle of this device (its first one-time prekey when `oneTime`).
        func bundle(oneTime: Bool = true) async throws -> PreKeyBundle {
            _ = try await manager.maintainPreKeys()
            let loaded = try await store.loadPreKeys()
            let keys = try XCTUnwrap(loaded)
            let identity = try await store.localIdentity()
            return PreKeyBundle(
                identityKey: identity.publicKey, signedPreKey: keys.currentSignedPreKey.key,
                oneTimePreKey: oneTime ? keys.oneTimePreKeys.first : nil)
        }
    }

    private let alice = address("alice", 1)
    private let bob = address("bob", 7)

    // MARK: Conversations

    func testTwoDevicesTalkThroughTheirFilesAcrossRestarts() async throws {
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        var a = try Device(alice, path: alicePath)
        var b = try Device(bob, path: bobPath)
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        let first = try await a.manager.encrypt(utf8("hello bob"), to: bob)
        let received = try await b.manager.decrypt(first, from: alice)
        XCTAssertEqual(received.plaintext, utf8("hello bob"))
        XCTAssertEqual(received.identityObservation, .firstUse)
        let recorded = try await b.store.record(forUser: alice.userID)
        let aliceIdentity = try await a.store.localIdentity()
        XCTAssertEqual(recorded?.identityKey, aliceIdentity.publicKey,
                       "the identity was recorded in the same transaction as the session")
        let consumed = try await b.store.loadPreKeys()
        XCTAssertNil(consumed?.oneTimePreKey(id: 1), "the one-time prekey was deleted with the session's creation")

        // Out of order: Bob replies three times, Alice reads the last first (two skipped keys).
        var replies: [[UInt8]] = []
        for index in 0 ..< 3 { replies.append(try await b.manager.encrypt(utf8("reply \(index)"), to: alice)) }
        let last = try await a.manager.decrypt(replies[2], from: bob).plaintext
        XCTAssertEqual(last, utf8("reply 2"))
        let held = try await a.store.loadSession(for: bob)
        XCTAssertEqual(held?.currentSession?.skippedMessageKeyCount, 2)

        // Restart both from their files.
        try a.store.close()
        try b.store.close()
        a = try Device(alice, path: alicePath)
        b = try Device(bob, path: bobPath)
        let reloaded = try await a.store.loadSession(for: bob)
        XCTAssertEqual(reloaded?.currentSession?.skippedMessageKeyCount, 2, "skipped keys survive the restart")
        let zero = try await a.manager.decrypt(replies[0], from: bob).plaintext
        let one = try await a.manager.decrypt(replies[1], from: bob).plaintext
        XCTAssertEqual([zero, one], [utf8("reply 0"), utf8("reply 1")])
        await assertThrows(.duplicateMessage) { try await a.manager.decrypt(replies[1], from: bob) }
        for round in 0 ..< 3 {
            let message = try await a.manager.encrypt(utf8("ping \(round)"), to: bob)
            let ping = try await b.manager.decrypt(message, from: alice).plaintext
            XCTAssertEqual(ping, utf8("ping \(round)"))
            let answer = try await b.manager.encrypt(utf8("pong \(round)"), to: alice)
            let pong = try await a.manager.decrypt(answer, from: bob).plaintext
            XCTAssertEqual(pong, utf8("pong \(round)"))
        }
        let devices = try await a.store.deviceIDs(ofUser: "bob")
        XCTAssertEqual(devices, [7])

        // A group: Alice's chain reaches Bob through the pairwise session, in one commit.
        let group = try GroupID("book club")
        try await b.manager.setGroupMembers([alice], for: group)
        let outcomes = try await a.manager.distributeSenderKey(for: group, to: [bob])
        let distribution = try XCTUnwrap(try outcomes.first?.result.get())
        try await b.manager.processSenderKeyDistribution(encrypted: distribution, for: group, from: alice)
        let groupMessage = try await a.manager.groupEncrypt(utf8("to the club"), for: group)
        try b.store.close()
        b = try Device(bob, path: bobPath)
        let opened = try await b.manager.groupDecrypt(groupMessage, for: group, from: alice)
        XCTAssertEqual(opened, utf8("to the club"))
        await assertThrows(.duplicateMessage) { try await b.manager.groupDecrypt(groupMessage, for: group, from: alice) }
        let chain = try await a.store.loadSendingChain(for: group)
        XCTAssertEqual(chain?.generation, 2, "created, then advanced once")

        // The file lists no contact, group or plaintext.
        try a.store.close()
        try b.store.close()
        for path in [alicePath, bobPath] {
            let bytes = fileBytes(path)
            for secret in ["alice", "bob", "book club", "hello bob", "to the club", "ping"] {
                XCTAssertFalse(bytes.contains(subsequence: utf8(secret)), "\(path) shows \(secret)")
            }
        }
    }

    /// The post-quantum pin (`SessionRecord.requiresPostQuantum`) is kept in the `sessions`
    /// row's value (its flags byte), rewritten with every message: it survives sending and a
    /// restart, with and without a current session, and goes with the record. (This target has
    /// no KEM: the pin is set on the record as a post-quantum session would set it.)
    func testThePostQuantumPinIsStoredWithTheRecordAndSurvivesRestarts() async throws {
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        var a = try Device(alice, path: alicePath)
        let b = try Device(bob, path: folder.appendingPathComponent("bob.sqlite").path)
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        let unpinned = try await a.manager.requiresPostQuantum(for: bob)
        XCTAssertFalse(unpinned)
        let loadedRecord = try await a.store.loadSession(for: bob)
        let loaded = try XCTUnwrap(loadedRecord)
        var pinned = try SessionRecord(
            restoringCurrentSession: loaded.currentSession, previousSessions: loaded.previousSessions, requiresPostQuantum: true)
        pinned.generation = loaded.generation
        var commit = StoreCommit()
        commit.store(pinned, for: bob)
        try await a.store.commit(commit)
        _ = try await a.manager.encrypt(utf8("rewrites the row"), to: bob)

        try a.store.close()
        a = try Device(alice, path: alicePath)
        let afterRestart = try await a.manager.requiresPostQuantum(for: bob)
        XCTAssertTrue(afterRestart)
        let classicSession = try await a.manager.isPostQuantum(sessionWith: bob)
        XCTAssertFalse(classicSession, "the pin does not make the classic session post-quantum, nor stop it")
        await assertThrows(SessionError.postQuantumRequired) { try await a.manager.processBundle(try await b.bundle(), for: bob) }

        // No current session (archived), still pinned: the flags byte alone.
        let reloadedRecord = try await a.store.loadSession(for: bob)
        var archived = try XCTUnwrap(reloadedRecord)
        archived.archiveCurrentSession()
        var archive = StoreCommit()
        archive.store(archived, for: bob)
        try await a.store.commit(archive)
        try a.store.close()
        a = try Device(alice, path: alicePath)
        let stillPinned = try await a.manager.requiresPostQuantum(for: bob)
        XCTAssertTrue(stillPinned)
        await assertThrows(SessionError.noSession) { _ = try await a.manager.isPostQuantum(sessionWith: bob) }

        // Deleting the record deletes the pin.
        try await a.store.deleteSession(for: bob)
        let cleared = try await a.manager.requiresPostQuantum(for: bob)
        XCTAssertFalse(cleared)
        try await a.manager.processBundle(try await b.bundle(), for: bob)
    }

    func testAFailedDecryptWritesNothingNotEvenTheTrustRecord() async throws {
        let folder = try temporaryFolder()
        let a = try Device(alice, path: folder.appendingPathComponent("alice.sqlite").path)
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        let b = try Device(bob, path: bobPath)
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        var message = try await a.manager.encrypt(utf8("hello"), to: bob)
        let before = try rows(bobPath)
        message[message.count - 1] ^= 1
        await assertThrows(.invalidMessage) { try await b.manager.decrypt(message, from: alice) }
        let after = try rows(bobPath)
        XCTAssertEqual(after, before, "no table changed")
        let trust = try await b.store.record(forUser: alice.userID)
        XCTAssertNil(trust)
    }

    // MARK: Generations

    func testAStaleRecordIsRefusedAndTheFileIsUnchanged() async throws {
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        let a = try Device(alice, path: alicePath)
        let b = try Device(bob, path: folder.appendingPathComponent("bob.sqlite").path)
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        let loadedStale = try await a.store.loadSession(for: bob)
        let stale = try XCTUnwrap(loadedStale)
        XCTAssertEqual(stale.generation, 1)
        _ = try await a.manager.encrypt(utf8("advances"), to: bob)
        let before = try rows(alicePath)
        var commit = StoreCommit()
        commit.store(stale, for: bob)
        await assertThrows(.staleState) { try await a.store.commit(commit) }
        var fresh = StoreCommit()
        fresh.store(SessionRecord(), for: bob)
        await assertThrows(.staleState) { try await a.store.commit(fresh) }
        let after = try rows(alicePath)
        XCTAssertEqual(after, before)
        let current = try await a.store.loadSession(for: bob)
        XCTAssertEqual(current?.generation, 2)
    }

    func testACopyFromBeforeADeletionNeverMatchesTheRecordCreatedAfterIt() async throws {
        let folder = try temporaryFolder()
        let a = try Device(alice, path: folder.appendingPathComponent("alice.sqlite").path)
        let b = try Device(bob, path: folder.appendingPathComponent("bob.sqlite").path)
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        for index in 0 ..< 3 { _ = try await a.manager.encrypt(utf8("old \(index)"), to: bob) }
        let loaded = try await a.store.loadSession(for: bob)
        let old = try XCTUnwrap(loaded)
        XCTAssertEqual(old.generation, 4)
        try await a.store.deleteSession(for: bob)
        try await a.manager.processBundle(try await b.bundle(oneTime: false), for: bob)
        for index in 0 ..< 6 {
            var commit = StoreCommit()
            commit.store(old, for: bob)
            await assertThrows(.staleState) { try await a.store.commit(commit) }
            _ = try await a.manager.encrypt(utf8("new \(index)"), to: bob)
        }
        let current = try await a.store.loadSession(for: bob)
        XCTAssertEqual(current?.generation, 11, "5 (first after the deletion) + 6 commits")
        // The same for received sender-key chains removed with a member.
        let group = try GroupID("club")
        try await b.manager.setGroupMembers([alice], for: group)
        let outcomes = try await a.manager.distributeSenderKey(for: group, to: [bob])
        let distribution = try XCTUnwrap(try outcomes.first?.result.get())
        try await b.manager.processSenderKeyDistribution(encrypted: distribution, for: group, from: alice)
        let chains = try await b.store.loadReceiverState(for: group, sender: alice)
        let oldChains = try XCTUnwrap(chains)
        try await b.store.removeReceiverState(for: group, sender: alice)
        let again = try await a.manager.distributeSenderKey(for: group, to: [bob])
        try await b.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(try again.first?.result.get()), for: group, from: alice)
        var commit = StoreCommit()
        commit.store(oldChains, for: group, sender: alice)
        await assertThrows(.staleState) { try await b.store.commit(commit) }
        let newChains = try await b.store.loadReceiverState(for: group, sender: alice)
        XCTAssertEqual(newChains?.generation, oldChains.generation + 1)
    }

    func testTwoStoresOnOneFileNeverReuseAMessageKeyNorDecryptTwice() async throws {
        // Two store objects on one file have separate connections and caches, as an app and
        // its notification extension do: only the file's generations keep them consistent.
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        let app = try Device(alice, path: alicePath)
        let b = try Device(bob, path: bobPath)
        try await app.manager.processBundle(try await b.bundle(), for: bob)
        let opening = try await app.manager.encrypt(utf8("opening"), to: bob)
        _ = try await b.manager.decrypt(opening, from: alice)
        let extensionProcess = try Device(alice, path: alicePath)
        let (alice, bob) = (alice, bob)
        let messages = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for index in 0 ..< 30 {
                let manager = index.isMultiple(of: 2) ? app.manager : extensionProcess.manager
                group.addTask { try await manager.encrypt(utf8("message \(index)"), to: bob) }
            }
            var messages: [[UInt8]] = []
            for try await message in group { messages.append(message) }
            return messages
        }
        let slots = try messages.map { bytes -> [UInt8] in
            let message = try IncomingMessage(serialized: bytes).ratchetMessage
            var slot = message.ratchetKey.rawRepresentation
            slot += [UInt8(message.counter >> 24), UInt8(message.counter >> 16 & 0xFF), UInt8(message.counter >> 8 & 0xFF),
                     UInt8(message.counter & 0xFF)]
            return slot
        }
        XCTAssertEqual(Set(slots).count, 30, "no (ratchet key, counter) sent twice")

        // Bob's app and extension both receive every message.
        let bobExtension = try Device(bob, path: bobPath)
        let outcomes = await withTaskGroup(of: [UInt8]?.self) { group in
            for message in messages {
                for manager in [b.manager, bobExtension.manager] {
                    group.addTask { try? await manager.decrypt(message, from: alice).plaintext }
                }
            }
            var outcomes: [[UInt8]] = []
            for await outcome in group { if let outcome { outcomes.append(outcome) } }
            return outcomes
        }
        XCTAssertEqual(outcomes.count, 30, "each message decrypted exactly once across the two stores")
        XCTAssertEqual(Set(outcomes.map { String(decoding: $0, as: UTF8.self) }), Set((0 ..< 30).map { "message \($0)" }))
    }

    /// The store answers trust decisions from memory; a trust change made by another store on
    /// the file (a second process) refuses the next commit built on the old answer, and the
    /// manager decides again on the record read anew.
    func testATrustChangeByASecondStoreIsSeenBeforeTheNextMessageIsSent() async throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("alice.sqlite").path
        let a = try Device(alice, path: path)
        let b = try Device(bob, path: folder.appendingPathComponent("bob.sqlite").path)
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        let first = try await a.manager.encrypt(utf8("one"), to: bob)
        _ = try await b.manager.decrypt(first, from: alice)
        // The decision for Bob is now in memory; a second store on the file records another key
        // for Bob (a change: nothing may be sent until the user accepts it).
        let second = try SQLiteProtocolStore(
            path: path, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(durability: .processCrash))
        let observation = try await second.observeIdentity(try IdentityKeyPair().publicKey, for: bob)
        guard case .changed = observation else { return XCTFail("a change: \(observation)") }
        await assertThrows(.untrustedIdentity) { try await a.manager.encrypt(utf8("two"), to: bob) }
        try second.close()
    }

    // MARK: Cost that does not grow with history

    func testPersistingAMessageRewritesOnlyTheRecordRowWhateverTheHistory() async throws {
        // Bob holds 40 previous sessions with Alice and about 2,000 skipped keys; one more
        // message in order must leave every previous session and skipped key row as it was.
        let folder = try temporaryFolder()
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        let b = try Device(bob, path: bobPath)
        let aliceIdentity = try IdentityKeyPair()
        let aliceStore = InMemoryProtocolStore(identity: aliceIdentity)
        let aliceTrust = InMemoryTrustStore()
        let a = SessionManager(store: aliceStore, trust: aliceTrust, localAddress: alice)
        let bundle = try await b.bundle(oneTime: false)
        for _ in 0 ... 40 {
            try await a.processBundle(bundle, for: bob)
            _ = try await b.manager.decrypt(try await a.encrypt(utf8("new session"), to: bob), from: alice)
        }
        for _ in 0 ..< 8 {
            for _ in 0 ..< 250 { _ = try await a.encrypt(utf8("lost"), to: bob) }
            _ = try await b.manager.decrypt(try await a.encrypt(utf8("after a gap"), to: bob), from: alice)
        }
        let loadedRecord = try await b.store.loadSession(for: alice)
        let record = try XCTUnwrap(loadedRecord)
        XCTAssertEqual(record.previousSessions.count, 40)
        XCTAssertEqual(record.currentSession?.skippedMessageKeyCount, 2000)
        let before = try rows(bobPath)
        XCTAssertEqual(before["session_states"]?.count, 40)
        XCTAssertEqual(before["skipped_keys"]?.count, 2000)

        _ = try await b.manager.decrypt(try await a.encrypt(utf8("in order"), to: bob), from: alice)
        let after = try rows(bobPath)
        XCTAssertEqual(after["session_states"], before["session_states"], "no previous session rewritten")
        XCTAssertEqual(after["session_orders"], before["session_orders"], "the order of the previous sessions not rewritten")
        XCTAssertEqual(after["skipped_keys"], before["skipped_keys"], "no skipped key rewritten")
        XCTAssertNotEqual(after["sessions"], before["sessions"], "the record row advanced")

        // The record the store cached is the one the file holds (read by a second store).
        let cached = try await b.store.loadSession(for: alice)
        let fromFile = try await freshStore(bobPath).loadSession(for: alice)
        XCTAssertEqual(try XCTUnwrap(cached).serialized(), try XCTUnwrap(fromFile).serialized())
    }

    func testTheFileHoldsTheLiveRecordAfterEveryStepOfARandomConversation() async throws {
        // The store writes what changed against what it last wrote (a session's generation,
        // the journal of its skipped keys, the previous sessions left as they were); a second
        // store on the file (an app extension) and stores opened for one step write too, so the
        // first one's cached record is sometimes stale and a new store's record partial. After
        // every step, the record the store hands out is the one the file holds.
        let folder = try temporaryFolder()
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        let b = try Device(bob, path: bobPath)
        let bobExtension = try Device(bob, path: bobPath)
        let a = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: alice)
        let bundle = try await b.bundle(oneTime: false)
        var random = SplitMix64(seed: 0xC0FFEE)
        var held: [[UInt8]] = []
        var delivered = 0
        for step in 0 ..< 160 {
            // The app, its extension, or a store opened for this step alone (nothing cached:
            // a ratchet message is then decided on the current session read alone).
            let receiver = switch random.next() % 6 {
            case 0: bobExtension
            case 1: try Device(bob, path: bobPath)
            default: b
            }
            let operation = step < 3 ? 0 : random.next() % 6
            switch operation {
            case 0:
                try await a.processBundle(bundle, for: bob)
                _ = try await receiver.manager.decrypt(try await a.encrypt(utf8("new session \(step)"), to: bob), from: alice)
            case 1, 2:
                for _ in 0 ... random.next() % 4 { held.append(try await a.encrypt(utf8("held \(step)"), to: bob)) }
            case 3, 4:
                guard !held.isEmpty else { continue }
                let message = held.remove(at: Int(random.next() % UInt64(held.count)))
                if (try? await receiver.manager.decrypt(message, from: alice)) != nil { delivered += 1 }
            default:
                // Alice may fail to place a reply on an old session (beyond the bounded search
                // of SPEC §3); Bob's side is what is checked.
                _ = try? await a.decrypt(try await receiver.manager.encrypt(utf8("reply \(step)"), to: alice), from: bob)
            }
            let cached = try await b.store.loadSession(for: alice)
            let fromFile = try await freshStore(bobPath).loadSession(for: alice)
            let (live, stored) = (try XCTUnwrap(cached).serialized(), try XCTUnwrap(fromFile).serialized())
            XCTAssertTrue(live == stored, "step \(step): the file does not hold the record in use")
        }
        XCTAssertGreaterThan(delivered, 20, "late and reordered messages were decrypted")
        let record = try await b.store.loadSession(for: alice)
        XCTAssertGreaterThan(try XCTUnwrap(record).previousSessions.count, 3, "the conversation went through several sessions")
    }

    func testANewStoreReadsOnlyTheCurrentSessionUntilAnOlderOneIsNeeded() async throws {
        // Bob holds three sessions with Alice; a message from the oldest is still on its way.
        let folder = try temporaryFolder()
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        let b = try Device(bob, path: bobPath)
        let a = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: alice)
        let bundle = try await b.bundle(oneTime: false)
        try await a.processBundle(bundle, for: bob)
        _ = try await b.manager.decrypt(try await a.encrypt(utf8("first session"), to: bob), from: alice)
        let late = try await a.encrypt(utf8("late, on the first session"), to: bob)
        for index in 0 ..< 2 {
            try await a.processBundle(bundle, for: bob)
            _ = try await b.manager.decrypt(try await a.encrypt(utf8("session \(index + 2)"), to: bob), from: alice)
        }
        // Bob has replied on the current session, so Alice sends ratchet messages (not prekey messages).
        _ = try await a.decrypt(try await b.manager.encrypt(utf8("hello"), to: alice), from: bob)

        // A store opened now (an app launch) decrypts a message of the current session and
        // encrypts a reply with the current session alone, and keeps the others in the file.
        let launched = try Device(bob, path: bobPath)
        let message = try await launched.manager.decrypt(try await a.encrypt(utf8("on the current session"), to: bob), from: alice)
        XCTAssertEqual(message.plaintext, utf8("on the current session"))
        let forUpdate = try await launched.store.loadSessionForUpdate(for: alice, currentSessionSuffices: true)
        XCTAssertEqual(forUpdate?.omitsPreviousSessions, true, "only the current session was read")
        let reply = try await a.decrypt(try await launched.manager.encrypt(utf8("reply"), to: alice), from: bob)
        XCTAssertEqual(reply.plaintext, utf8("reply"))
        let afterReply = try await freshStore(bobPath).loadSession(for: alice)
        XCTAssertEqual(afterReply?.previousSessions.count, 2, "the previous sessions stay in the file")

        // The late message needs the oldest session: the whole record is read, and it decrypts.
        let decryptedLate = try await launched.manager.decrypt(late, from: alice)
        XCTAssertEqual(decryptedLate.plaintext, utf8("late, on the first session"))
        let whole = try await launched.store.loadSession(for: alice)
        XCTAssertEqual(whole?.omitsPreviousSessions, false)
        XCTAssertEqual(whole?.previousSessions.count, 2)
        let fromFile = try await freshStore(bobPath).loadSession(for: alice)
        XCTAssertTrue(try XCTUnwrap(whole).serialized() == (try XCTUnwrap(fromFile).serialized()), "the file holds the record in use")
        await assertThrows(.duplicateMessage) { _ = try await launched.manager.decrypt(late, from: alice) }
    }

    // MARK: Damage and migration

    /// A row's value is sealed for its generation: an older value of the same row put back
    /// under the current generation (the old sending chain, whose next key was used) does not
    /// load, for a session record and for a group's sending chain alike.
    func testAnOlderValuePutBackUnderTheCurrentGenerationDoesNotLoad() async throws {
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        var a = try Device(alice, path: alicePath)
        let b = try Device(bob, path: folder.appendingPathComponent("bob.sqlite").path)
        let group = try GroupID("generation-bound")
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        _ = try await a.manager.senderKeyDistributionMessage(for: group)
        let older = try withRawDatabase(alicePath) { db in
            (try Data.fetchOne(db, sql: "SELECT sealed FROM sessions"), try Data.fetchOne(db, sql: "SELECT sealed FROM sending_chains"))
        }
        _ = try await a.manager.encrypt(utf8("advances the session"), to: bob)
        _ = try await a.manager.groupEncrypt(utf8("advances the chain"), for: group)
        try a.store.close()
        try withRawDatabase(alicePath) { db in
            try db.execute(sql: "UPDATE sessions SET sealed = ?", arguments: [older.0])
            try db.execute(sql: "UPDATE sending_chains SET sealed = ?", arguments: [older.1])
        }
        a = try Device(alice, path: alicePath)
        await assertThrows(.damagedState(.session)) { try await a.store.loadSession(for: bob) }
        await assertThrows(.damagedState(.senderKeySendingChain)) { try await a.store.loadSendingChain(for: group) }
        await assertThrows(.damagedState(.session, peer: bob)) { try await a.manager.encrypt(utf8("never from the old chain"), to: bob) }
    }

    func testADamagedSessionIsATypedErrorAndOtherPeersStayUsable() async throws {
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        var a = try Device(alice, path: alicePath)
        let b = try Device(bob, path: folder.appendingPathComponent("bob.sqlite").path)
        let carol = address("carol", 2)
        let c = try Device(carol, path: folder.appendingPathComponent("carol.sqlite").path)
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        try await a.manager.processBundle(try await c.bundle(), for: carol)
        try a.store.close()
        let carolHash = try XCTUnwrap(a.store.sealer.rowKey(utf8("carol"), in: .sessionUser) as [UInt8]?)
        try withRawDatabase(alicePath) { db in
            try db.execute(sql: "UPDATE sessions SET sealed = substr(sealed, 1, 30) || x'00' || substr(sealed, 32) WHERE user_hash = ?",
                           arguments: [Data(carolHash)])
        }
        a = try Device(alice, path: alicePath)
        do {
            _ = try await a.store.loadSession(for: carol)
            XCTFail("a damaged record loaded")
        } catch {
            XCTAssertEqual(error, .damagedState(.session))
        }
        let toBob = try await a.manager.encrypt(utf8("still fine"), to: bob)
        let atBob = try await b.manager.decrypt(toBob, from: alice).plaintext
        XCTAssertEqual(atBob, utf8("still fine"))
        // The damaged record can be replaced: delete it and start again.
        try await a.store.deleteSession(for: carol)
        try await a.manager.processBundle(try await c.bundle(oneTime: false), for: carol)
        let toCarol = try await a.manager.encrypt(utf8("again"), to: carol)
        let atCarol = try await c.manager.decrypt(toCarol, from: alice).plaintext
        XCTAssertEqual(atCarol, utf8("again"))
    }

    func testTheSchema1FileMigratesAndThenHoldsSessions() async throws {
        let path = try temporaryStorePath()
        try FileManager.default.copyItem(at: fixturesFolder.appendingPathComponent("schema1.sqlite"), to: URL(fileURLWithPath: path))
        let b = try Device(bob, path: try temporaryStorePath())
        var migrated = try Device(alice, path: path)
        let version = try await migrated.store.readTransaction { try Int.fetchOne($0, sql: "PRAGMA user_version") }
        XCTAssertEqual(version, SQLiteProtocolStore.currentSchemaVersion)
        try await migrated.manager.processBundle(try await b.bundle(), for: bob)
        let message = try await migrated.manager.encrypt(utf8("from a migrated file"), to: bob)
        let opened = try await b.manager.decrypt(message, from: alice).plaintext
        XCTAssertEqual(opened, utf8("from a migrated file"))
        try migrated.store.close()
        migrated = try Device(alice, path: path)
        let record = try await migrated.store.loadSession(for: bob)
        XCTAssertEqual(record?.generation, 2)
        let trust = try await migrated.store.record(forUser: "fixture-bob")
        XCTAssertEqual(trust?.status, .verified, "schema 1's per-device rows are folded into the user's record")
    }

    // MARK: Support

    /// Every row of the session and sender-key tables, as raw bytes per table (sorted).
    private func rows(_ path: String) throws -> [String: [[UInt8]]] {
        try withRawDatabase(path) { db in
            var tables: [String: [[UInt8]]] = [:]
            for table in ["sessions", "session_orders", "session_states", "skipped_keys", "sending_chains", "receiver_states", "prekeys", "trust"] {
                let values = try Row.fetchAll(db, sql: "SELECT * FROM \(table)").map { row -> [UInt8] in
                    row.databaseValues.flatMap { value -> [UInt8] in
                        switch value.storage {
                        case let .blob(data): return [UInt8](data)
                        case let .int64(number): return utf8(String(number))
                        case let .string(text): return utf8(text)
                        case let .double(number): return utf8(String(number))
                        case .null: return []
                        }
                    }
                }
                tables[table] = values.sorted { $0.lexicographicallyPrecedes($1) }
            }
            return tables
        }
    }

    /// A second store on the file (no shared cache).
    private func freshStore(_ path: String) throws -> SQLiteProtocolStore {
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
    }

    private func assertThrows<T>(
        _ expected: SessionError, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> T
    ) async {
        do {
            _ = try await body()
            XCTFail("expected \(expected), but the call succeeded", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? SessionError, expected, file: file, line: line)
        }
    }
}

private func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
