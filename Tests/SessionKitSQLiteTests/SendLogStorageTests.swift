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
}
