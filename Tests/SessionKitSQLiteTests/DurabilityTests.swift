import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
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
        let trust = try await store.record(for: bob)
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
        let reopenedTrust = try await reopened.record(for: bob)
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
}
