import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import XCTest

/// The send log's sealed table (`send_log`, `SchemaSendLog`): values sealed and bound to their
/// row and expiry, entries written in the transaction that stores the message's chain (one WAL
/// commit per message, as without the log), and deleted with `secure_delete` once used.
final class SendLogStorageTests: XCTestCase {
    private let alice = address("alice", 1)
    private let bob = address("bob", 1)

    private func open(_ path: String) throws -> SQLiteProtocolStore {
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
    }

    /// Alice (logging or not) and Bob with a session both ways.
    private func pair(_ folder: URL, logging: Bool) async throws -> (SQLiteProtocolStore, SessionManager, SQLiteProtocolStore, SessionManager, String) {
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        let aliceStore = try open(alicePath)
        let aliceManager = SessionManager(store: aliceStore, trust: aliceStore, localAddress: alice, sendLog: logging ? aliceStore : nil)
        let bobStore = try open(folder.appendingPathComponent("bob.sqlite").path)
        let bobManager = SessionManager(store: bobStore, trust: bobStore, localAddress: bob)
        var published = try PublishedPreKeys(registering: try await bobManager.maintainPreKeys())
        try await aliceManager.processBundle(published.takeBundle(), for: bob)
        _ = try await bobManager.receive(try await aliceManager.encryptEnvelope(Array("hello".utf8), to: bob))
        _ = try await aliceManager.receive(try await bobManager.encryptEnvelope(Array("hi".utf8), to: alice))
        return (aliceStore, aliceManager, bobStore, bobManager, alicePath)
    }

    /// The number of valid commit frames in the file's WAL (frames whose salts match the
    /// header's and whose "database size after commit" is set).
    private func walCommits(_ path: String) -> Int {
        guard let data = FileManager.default.contents(atPath: path + "-wal"), data.count >= 32 else { return 0 }
        let bytes = [UInt8](data)
        func u32(_ offset: Int) -> UInt32 { bytes[offset ..< offset + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        let pageSize = Int(u32(8))
        let salts = Array(bytes[16 ..< 24])
        var commits = 0
        var offset = 32
        while offset + 24 + pageSize <= bytes.count, Array(bytes[offset + 8 ..< offset + 16]) == salts {
            if u32(offset + 4) != 0 { commits += 1 }
            offset += 24 + pageSize
        }
        return commits
    }

    /// One message is one transaction with the log on, as with it off: the entry goes in the
    /// commit that stores the advanced session.
    func testAnEntryIsWrittenInTheSameTransactionAsTheSession() async throws {
        for logging in [false, true] {
            let (aliceStore, aliceManager, bobStore, _, alicePath) = try await pair(try temporaryFolder(), logging: logging)
            defer { try? aliceStore.close(); try? bobStore.close() }
            let before = walCommits(alicePath)
            for index in 0 ..< 3 { _ = try await aliceManager.encrypt(Array("message \(index)".utf8), to: bob) }
            XCTAssertEqual(walCommits(alicePath) - before, 3, "logging: \(logging)")
            let entries = try await aliceStore.sendLogEntryCount()
            XCTAssertEqual(entries, logging ? 4 : 0, "hello and the three")
        }
    }

    /// The log's changes are part of the commit's transaction: a commit refused as stale (its
    /// session record was written meanwhile) leaves no entry behind, and one that goes through
    /// writes it.
    func testAStaleCommitWritesNoEntry() async throws {
        let (aliceStore, _, bobStore, _, _) = try await pair(try temporaryFolder(), logging: true)
        defer { try? aliceStore.close(); try? bobStore.close() }
        let loaded = try await aliceStore.loadSession(for: bob)
        let record = try XCTUnwrap(loaded)
        let before = try await aliceStore.sendLogEntryCount()
        var changes = SendLogChanges()
        let chain = SendLogChain.pairwise(recipient: bob, ratchetKey: [UInt8](repeating: 7, count: 32))
        changes.added = [SendLogEntry(id: 0, chain: chain, position: 0, expiresAt: Timestamp(secondsSince1970: .max), plaintext: [1, 2, 3])]
        var commit = StoreCommit()
        commit.store(record, for: bob)
        commit.sendLog = changes
        try await aliceStore.commit(commit)
        let written = try await aliceStore.loadSendLog(for: chain, now: Timestamp(secondsSince1970: 0))
        XCTAssertEqual(written.map(\.plaintext), [[1, 2, 3]])
        let stale = await thrownError { try await aliceStore.commit(commit) }
        XCTAssertEqual(stale as? SessionError, .staleState)
        let after = try await aliceStore.sendLogEntryCount()
        XCTAssertEqual(after, before + 1, "the refused commit added nothing")
    }

    /// The bound keeps the newest entries; expired entries are never returned and go, oldest
    /// first, a batch per write.
    func testTheBoundAndExpiryInTheTable() async throws {
        let store = try open(try temporaryStorePath())
        defer { try? store.close() }
        let chain = SendLogChain.group(try GroupID("bounded"), chainID: [UInt8](repeating: 3, count: 32))
        let start = Timestamp(secondsSince1970: 1_000_000)
        func entries(_ positions: Range<UInt32>, expiring: Timestamp) -> [SendLogEntry] {
            positions.map { SendLogEntry(id: 0, chain: chain, position: $0, expiresAt: expiring, plaintext: [UInt8($0 & 0xFF)]) }
        }
        var changes = SendLogChanges()
        changes.added = entries(0 ..< 5, expiring: start.adding(seconds: 100))
        changes.maximumEntries = 3
        try await store.applySendLog(changes)
        let bounded = try await store.loadSendLog(for: chain, now: start)
        XCTAssertEqual(bounded.map(\.position), [2, 3, 4])
        XCTAssertEqual(bounded.map(\.plaintext), [[2], [3], [4]])
        let none = try await store.loadSendLog(for: chain, now: start.adding(seconds: 100))
        XCTAssertEqual(none, [], "expired entries are not returned")

        var many = SendLogChanges()
        many.added = entries(10 ..< 110, expiring: start.adding(seconds: 100))
        try await store.applySendLog(many)
        let total = try await store.sendLogEntryCount()
        XCTAssertEqual(total, 103)
        var expire = SendLogChanges()
        expire.expiringAt = start.adding(seconds: 100)
        try await store.applySendLog(expire)
        let early = try await store.sendLogEntryCount()
        XCTAssertEqual(early, 103, "the clear expiry is rounded up to the hour: rows go once that has passed")
        expire.expiringAt = Timestamp(secondsSince1970: SendLogValueCoding.coarseExpiry(start.adding(seconds: 100).secondsSince1970))
        try await store.applySendLog(expire)
        let afterOne = try await store.sendLogEntryCount()
        XCTAssertEqual(afterOne, 103 - SQLiteProtocolStore.expiryBatch, "one batch of the oldest")
        try await store.applySendLog(expire)
        let afterTwo = try await store.sendLogEntryCount()
        XCTAssertEqual(afterTwo, 0)
    }

    /// The plaintext is not in the file; an entry whose expiry was pushed back, or whose value
    /// was moved to another row, does not open; a used entry is overwritten in the file.
    func testEntriesAreSealedBoundToTheirRowAndDeletedFromTheFile() async throws {
        let folder = try temporaryFolder()
        let (aliceStore, aliceManager, bobStore, bobManager, alicePath) = try await pair(folder, logging: true)
        defer { try? bobStore.close() }
        let marker = "a marker only this message holds 0xC0FFEE"
        let sent = try await aliceManager.encryptEnvelope(Array(marker.utf8), to: bob)
        XCTAssertFalse(fileBytes(alicePath).contains(subsequence: Array(marker.utf8)))
        let sealed = try withRawDatabase(alicePath) { db in
            try Data.fetchOne(db, sql: "SELECT sealed FROM send_log ORDER BY id DESC LIMIT 1")
        }
        let sealedBytes = [UInt8](try XCTUnwrap(sealed))
        XCTAssertTrue(fileBytes(alicePath).contains(subsequence: sealedBytes))

        // Tampering: an expiry pushed back, then a value swapped between rows.
        let header = try RatchetMessage(serialized: sent.body)
        let chain = SendLogChain.pairwise(recipient: bob, ratchetKey: header.ratchetKey.rawRepresentation)
        let now = SystemWallClock().now()
        let logged = try await aliceStore.loadSendLog(for: chain, now: now)
        XCTAssertEqual(logged.map(\.plaintext), [Array(marker.utf8)])
        func latest(_ sql: String, _ arguments: StatementArguments = []) throws {
            try withRawDatabase(alicePath) { db in
                try db.execute(sql: sql + " WHERE id = (SELECT max(id) FROM send_log)", arguments: arguments)
            }
        }
        try latest("UPDATE send_log SET expires_at = expires_at + 86400")
        let pushed = try await aliceStore.loadSendLog(for: chain, now: now)
        XCTAssertEqual(pushed, [], "an entry whose expiry was pushed back does not open, and is left out")
        try latest("UPDATE send_log SET expires_at = expires_at - 86400")
        try latest("UPDATE send_log SET sealed = (SELECT sealed FROM send_log WHERE id = 1)")
        let moved = try await aliceStore.loadSendLog(for: chain, now: now)
        XCTAssertEqual(moved, [], "nor one whose value was moved from another row")
        try latest("UPDATE send_log SET sealed = ?", [Data(sealedBytes)])
        let restored = try await aliceStore.loadSendLog(for: chain, now: now)
        XCTAssertEqual(restored.map(\.plaintext), [Array(marker.utf8)])

        // Used: Bob lost the session, his notice takes the entry out; it is gone from the file.
        try await bobStore.deleteSession(for: alice)
        guard case let .undecryptable(failure) = try await bobManager.receive(sent), let notice = failure.retryNotice else {
            return XCTFail("no notice")
        }
        guard case let .retryNotice(outcome) = try await aliceManager.receive(notice) else { return XCTFail("no outcome") }
        XCTAssertEqual(outcome.resend.map(\.plaintext), [Array(marker.utf8)])
        let left = try await aliceStore.loadSendLog(for: chain, now: now)
        XCTAssertEqual(left, [])
        try aliceStore.close()
        XCTAssertFalse(fileBytes(alicePath).contains(subsequence: sealedBytes), "secure_delete overwrote the value")
    }

    /// A pairwise entry keeps the identity key it was sent under; values are padded (two
    /// messages of different lengths in one size class seal to the same length) and the clear
    /// expiry is rounded up to the hour while the entry keeps its exact one; accepting a key
    /// for a user removes that user's pairwise entries under other keys, and no one else's.
    func testEntriesKeepTheirKeyArePaddedAndAKeyChangeRemovesTheOldKeysEntries() async throws {
        let path = try temporaryStorePath()
        let store = try open(path)
        defer { try? store.close() }
        let oldKey = try IdentityKeyPair().publicKey
        let newKey = try IdentityKeyPair().publicKey
        let carolKey = try IdentityKeyPair().publicKey
        let carol = address("carol", 1)
        let toBob = SendLogChain.pairwise(recipient: bob, ratchetKey: [UInt8](repeating: 1, count: 32))
        let toBobNew = SendLogChain.pairwise(recipient: bob, ratchetKey: [UInt8](repeating: 2, count: 32))
        let toCarol = SendLogChain.pairwise(recipient: carol, ratchetKey: [UInt8](repeating: 3, count: 32))
        let toGroup = SendLogChain.group(try GroupID("kept"), chainID: [UInt8](repeating: 4, count: 32))
        let expiry = Timestamp(secondsSince1970: 1_000_123)
        var changes = SendLogChanges()
        changes.added = [
            SendLogEntry(id: 0, chain: toBob, position: 0, expiresAt: expiry, plaintext: [1], peerIdentityKey: oldKey),
            SendLogEntry(id: 0, chain: toBob, position: 1, expiresAt: expiry, plaintext: [UInt8](repeating: 2, count: 150), peerIdentityKey: oldKey),
            SendLogEntry(id: 0, chain: toBobNew, position: 0, expiresAt: expiry, plaintext: [3], peerIdentityKey: newKey),
            SendLogEntry(id: 0, chain: toCarol, position: 0, expiresAt: expiry, plaintext: [4], peerIdentityKey: carolKey),
            SendLogEntry(id: 0, chain: toGroup, position: 0, expiresAt: expiry, plaintext: [5]),
        ]
        try await store.applySendLog(changes)
        let now = Timestamp(secondsSince1970: 1_000_000)
        let bobs = try await store.loadSendLog(for: toBob, now: now)
        XCTAssertEqual(bobs.map(\.peerIdentityKey), [oldKey, oldKey])
        XCTAssertEqual(bobs.map(\.expiresAt), [expiry, expiry], "the entry keeps its exact expiry")
        let group = try await store.loadSendLog(for: toGroup, now: now)
        XCTAssertEqual(group.map(\.peerIdentityKey), [nil])
        let rows = try withRawDatabase(path) { db in
            try Row.fetchAll(db, sql: "SELECT expires_at, length(sealed) AS sealed_length FROM send_log ORDER BY id")
        }
        XCTAssertEqual(Set(rows.map { $0["expires_at"] as Int64 }), [1_000_800], "rounded up to the hour")
        XCTAssertEqual(rows[0]["sealed_length"] as Int, rows[1]["sealed_length"] as Int, "1 and 150 bytes: one size class")
        let late = try await store.loadSendLog(for: toBob, now: expiry)
        XCTAssertEqual(late, [], "past its exact expiry an entry is not returned, whatever the clear column says")

        var accepted = SendLogChanges()
        accepted.removedPeers = [SendLogPeerKeep(userID: "bob", keeping: newKey)]
        try await store.applySendLog(accepted)
        let oldLeft = try await store.loadSendLog(for: toBob, now: now)
        XCTAssertEqual(oldLeft, [])
        let newLeft = try await store.loadSendLog(for: toBobNew, now: now)
        XCTAssertEqual(newLeft.map(\.plaintext), [[3]])
        let carolLeft = try await store.loadSendLog(for: toCarol, now: now)
        XCTAssertEqual(carolLeft.map(\.plaintext), [[4]])
        let groupLeft = try await store.loadSendLog(for: toGroup, now: now)
        XCTAssertEqual(groupLeft.map(\.plaintext), [[5]])

        var forgotten = SendLogChanges()
        forgotten.removedPeers = [SendLogPeerKeep(userID: "bob", keeping: nil)]
        try await store.applySendLog(forgotten)
        let bobGone = try await store.loadSendLog(for: toBobNew, now: now)
        XCTAssertEqual(bobGone, [], "forgetting a user removes its entries under every key")
        let carolStays = try await store.loadSendLog(for: toCarol, now: now)
        XCTAssertEqual(carolStays.map(\.plaintext), [[4]])
    }

    /// The schema step deletes the entries written before entries were bound to a key (nothing
    /// could tell whether they may be re-sent), and adds the columns.
    func testTheMigrationDeletesUnboundEntries() async throws {
        let path = try temporaryStorePath()
        try open(path).close()
        try withRawDatabase(path) { db in
            try db.execute(sql: """
                ALTER TABLE send_log DROP COLUMN user_hash;
                ALTER TABLE send_log DROP COLUMN peer_hash;
                INSERT INTO send_log (id, chain_hash, expires_at, sealed) VALUES (1, zeroblob(32), 9000000000, x'00');
                PRAGMA user_version = \(SchemaSendLogPeers.version - 1);
                """)
        }
        let store = try open(path)
        defer { try? store.close() }
        let count = try await store.sendLogEntryCount()
        XCTAssertEqual(count, 0)
        let columns = try withRawDatabase(path) { db in try Row.fetchAll(db, sql: "PRAGMA table_info(send_log)").map { $0["name"] as String } }
        XCTAssertTrue(columns.contains("peer_hash") && columns.contains("user_hash"))
    }
}
