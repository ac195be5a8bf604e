import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import XCTest

/// What a committed transaction survives (`SQLiteStoreOptions.durability`), what `close()`
/// leaves on disk, and what a refused open leaves untouched.
final class DurabilityTests: XCTestCase {
    /// `PRAGMA synchronous` of the writer and of a reader of `store`.
    private func synchronousSettings(_ store: SQLiteProtocolStore) throws -> (writer: Int?, reader: Int?) {
        let writer = try store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        let reader = try store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        return (writer, reader)
    }

    func testEveryConnectionRunsTheSynchronousSettingOfTheOptions() throws {
        // FULL is 2, NORMAL is 1 (GRDB sets NORMAL on the writer when it turns WAL on).
        for (durability, expected) in [(SQLiteStoreOptions.Durability.powerLoss, 2), (.processCrash, 1)] {
            let path = try temporaryStorePath()
            let store = try SQLiteProtocolStore(
                path: path, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(durability: durability))
            let settings = try synchronousSettings(store)
            XCTAssertEqual(settings.writer, expected, "\(durability): the writer")
            XCTAssertEqual(settings.reader, expected, "\(durability): a reader")
            try store.close()
            // Again on an existing file.
            let reopened = try SQLiteProtocolStore(
                path: path, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(durability: durability))
            XCTAssertEqual(try synchronousSettings(reopened).writer, expected, "\(durability): the writer after reopening")
            try reopened.close()
        }
    }

    // MARK: Closing

    /// A bundle of a new device on its own file in `folder`.
    private func bundleOfANewDevice(in folder: URL, address: ProtocolAddress) async throws -> PreKeyBundle {
        let store = try SQLiteProtocolStore(path: folder.appendingPathComponent("peer.sqlite").path, storageKey: try fixtureStorageKey())
        defer { try? store.close() }
        _ = try await SessionManager(store: store, trust: store, localAddress: address).maintainPreKeys()
        let loaded = try await store.loadPreKeys()
        let keys = try XCTUnwrap(loaded)
        let identity = try await store.localIdentity()
        return PreKeyBundle(identityKey: identity.publicKey, signedPreKey: keys.currentSignedPreKey.key, oneTimePreKey: keys.oneTimePreKeys.first)
    }

    func testCloseLeavesEveryCommittedItemInTheDatabaseFileAlone() async throws {
        let folder = try temporaryFolder()
        let peerFolder = folder.appendingPathComponent("peer")
        try FileManager.default.createDirectory(at: peerFolder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("account.sqlite").path
        let alice = address("alice", 1), bob = address("bob", 7)
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let manager = SessionManager(store: store, trust: store, localAddress: alice)
        _ = try await manager.maintainPreKeys()
        try await manager.processBundle(try await bundleOfANewDevice(in: peerFolder, address: bob), for: bob)
        _ = try await manager.encrypt(Array("hello".utf8), to: bob)
        try await store.appendArchivedMessage(Array("kept".utf8), messageID: "m1", conversationID: "bob", timestamp: 1)
        // Reads go through the pool's reader connections (read-only: they cannot checkpoint).
        let session = try await store.loadSession(for: bob)
        let page = try await store.archivedMessages(inConversation: "bob", limit: 10)
        XCTAssertEqual(page.messages.map(\.messageID), ["m1"])
        let identity = try await store.localIdentity()
        let preKeys = try await store.loadPreKeys()
        let trust = try await store.record(forUser: bob.userID)
        try store.close()
        XCTAssertNoThrow(try store.close(), "closing again does nothing")
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
        XCTAssertEqual(wal, 0, "no committed frame is left in the WAL")

        // The database file alone, elsewhere, holds everything.
        let copyFolder = try temporaryFolder()
        let copy = copyFolder.appendingPathComponent("account.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let reopened = try SQLiteProtocolStore(
            path: copy, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(createIfMissing: false))
        defer { try? reopened.close() }
        let reopenedIdentity = try await reopened.localIdentity()
        XCTAssertEqual(reopenedIdentity.publicKey, identity.publicKey)
        let reopenedSession = try await reopened.loadSession(for: bob)
        XCTAssertNotNil(reopenedSession)
        XCTAssertEqual(reopenedSession?.generation, session?.generation)
        let reopenedPreKeys = try await reopened.loadPreKeys()
        XCTAssertEqual(reopenedPreKeys?.serialized(), preKeys?.serialized())
        let reopenedTrust = try await reopened.record(forUser: bob.userID)
        XCTAssertNotNil(reopenedTrust)
        XCTAssertEqual(reopenedTrust, trust)
        let reopenedPage = try await reopened.archivedMessages(inConversation: "bob", limit: 10)
        XCTAssertEqual(reopenedPage.messages.map { String(decoding: $0.plaintext.bytes, as: UTF8.self) }, ["kept"])
    }

    func testCallsAfterCloseFailWithADatabaseError() async throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        try store.close()
        let error = await thrownError { _ = try await store.archivedMessages(inConversation: "c", limit: 1) }
        guard case .database? = error as? SQLiteStoreError else { return XCTFail("expected a database error, got \(String(describing: error))") }
    }

    // MARK: Refused opens

    /// The bytes of the database file, its WAL and its shared-memory file, for those that exist.
    private func snapshot(_ path: String) -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal", "-shm", "-journal"] {
            if let data = FileManager.default.contents(atPath: path + suffix) { files[suffix] = data }
        }
        return files
    }

    /// Copies the database file, its WAL and its shared-memory file (those that exist) to
    /// `folder`, as a backup taken while the store is open would; returns the copy's path.
    private func copyWithWAL(_ path: String, to folder: URL) throws -> String {
        let copy = folder.appendingPathComponent((path as NSString).lastPathComponent).path
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        return copy
    }

    /// Asserts that opening `path` with `key` (and `identity`) fails with `expected` and leaves
    /// every byte of the file, its WAL and its shared-memory file as they were.
    private func assertRefusedUntouched(
        _ path: String, key: StorageKey, identity: IdentityKeyPair? = nil, expected: SQLiteStoreError,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let before = snapshot(path)
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: key, identity: identity), file: file, line: line) {
            XCTAssertEqual($0 as? SQLiteStoreError, expected, file: file, line: line)
        }
        let after = snapshot(path)
        XCTAssertEqual(Set(after.keys), Set(before.keys), "the same files exist", file: file, line: line)
        for (suffix, bytes) in before {
            XCTAssertTrue(after[suffix] == bytes, "\(suffix.isEmpty ? "the database file" : suffix) changed", file: file, line: line)
        }
    }

    func testARefusedOpenOfAClosedFileChangesNoByte() throws {
        let path = try temporaryStorePath()
        let identity = try IdentityKeyPair(seed: [UInt8](repeating: 3, count: 32))
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), identity: identity).close()
        assertRefusedUntouched(path, key: StorageKey.generate(), expected: .wrongStorageKey)
        assertRefusedUntouched(path, key: try fixtureStorageKey(), identity: try IdentityKeyPair(), expected: .identityMismatch)
        let newer = SQLiteProtocolStore.currentSchemaVersion + 1
        try withRawDatabase(path) { try $0.execute(sql: "PRAGMA user_version = \(newer)") }
        assertRefusedUntouched(
            path, key: try fixtureStorageKey(), expected: .newerSchema(found: newer, supported: SQLiteProtocolStore.currentSchemaVersion))
    }

    func testARefusedOpenOfAFileWithALeftoverWALChangesNoByte() async throws {
        // A copy taken while the store is open: what was committed is in the WAL only.
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        try await store.appendArchivedMessage(Array("only in the WAL".utf8), messageID: "m1", conversationID: "c", timestamp: 1)
        let copy = try copyWithWAL(path, to: try temporaryFolder())
        try store.close()
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy + "-wal"))
        assertRefusedUntouched(copy, key: StorageKey.generate(), expected: .wrongStorageKey)
        assertRefusedUntouched(copy, key: try fixtureStorageKey(), identity: try IdentityKeyPair(), expected: .identityMismatch)
        // A copy of the file and its WAL without the -shm file: SQLite has to create one to read
        // the WAL (an index of it), but neither the file nor the WAL changes.
        let withoutShm = try temporaryFolder().appendingPathComponent("account.sqlite").path
        for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: copy + suffix, toPath: withoutShm + suffix) }
        let before = snapshot(withoutShm)
        XCTAssertThrowsError(try SQLiteProtocolStore(path: withoutShm, storageKey: StorageKey.generate())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .wrongStorageKey)
        }
        let after = snapshot(withoutShm)
        XCTAssertTrue(after[""] == before[""] && after["-wal"] == before["-wal"], "the file and its WAL are unchanged")
        // The copy opens with its key, and holds what was committed.
        let reopened = try SQLiteProtocolStore(path: copy, storageKey: try fixtureStorageKey())
        let page = try await reopened.archivedMessages(inConversation: "c", limit: 10)
        XCTAssertEqual(page.messages.map(\.messageID), ["m1"])
        try reopened.close()
    }

    func testARefusedOpenOfANewerSchemaWithALeftoverWALChangesNoByte() throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let newer = SQLiteProtocolStore.currentSchemaVersion + 1
        // A second connection (as a newer library would) writes the version: into the WAL.
        let raw = try DatabaseQueue(path: path)
        try raw.writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = \(newer)") }
        let copy = try copyWithWAL(path, to: try temporaryFolder())
        try raw.close()
        try store.close()
        assertRefusedUntouched(
            copy, key: try fixtureStorageKey(), expected: .newerSchema(found: newer, supported: SQLiteProtocolStore.currentSchemaVersion))
    }

    func testARefusedOpenOfAnotherDatabaseWithALeftoverWALChangesNoByte() throws {
        let path = try temporaryStorePath()
        let other = try DatabasePool(path: path)
        try other.write { try $0.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('x')") }
        let copy = try copyWithWAL(path, to: try temporaryFolder())
        try other.close()
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy + "-wal"))
        assertRefusedUntouched(copy, key: try fixtureStorageKey(), expected: .notAStore(path: copy))
        // Not a database at all.
        let garbage = try temporaryStorePath()
        try Data((0 ..< 4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: garbage))
        assertRefusedUntouched(garbage, key: try fixtureStorageKey(), expected: .notADatabase(path: garbage))
    }

    // MARK: Old frames

    func testOldWALFramesAreCutOffWhenTheWALStartsOver() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        defer { try? store.close() }
        func walSize() -> Int {
            (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
        }
        // About 100 KiB of frames, then a checkpoint (as SQLite runs one every 1,000 pages).
        for index in 0 ..< 25 {
            try await store.appendArchivedMessage(
                [UInt8](repeating: UInt8(index), count: 4_000), messageID: "m\(index)", conversationID: "c", timestamp: Int64(index))
        }
        let grown = walSize()
        XCTAssertGreaterThan(grown, 100_000)
        _ = try await store.pool.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        // The next commit writes the WAL from its start again; what lay beyond is cut off
        // (journal_size_limit = 0), not left in the file with its older values.
        _ = try await store.deleteArchivedMessage("m0", inConversation: "c")
        XCTAssertLessThan(walSize(), 20_000, "the WAL was \(grown) bytes before the checkpoint")
    }

    func testABusyTimeoutOutOfSQLitesRangeIsClamped() throws {
        for seconds in [Double.infinity, 1e12, -5, .nan] {
            let store = try SQLiteProtocolStore(
                path: try temporaryStorePath(), storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(busyTimeout: seconds))
            try store.close()
        }
    }
}
