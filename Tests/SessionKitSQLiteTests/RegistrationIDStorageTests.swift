import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import XCTest

/// The installation's registration id in the SQLite store (SPEC §9, `SchemaRegistrationID`):
/// drawn with a new file, drawn for an older file in the transaction that migrates it, kept
/// across opens, sealed like every other value, and published by the manager.
final class RegistrationIDStorageTests: XCTestCase {
    private func open(_ path: String, identity: IdentityKeyPair? = nil) throws -> SQLiteProtocolStore {
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), identity: identity)
    }

    private func registrationRows(_ path: String) throws -> [[UInt8]] {
        try withRawDatabase(path) { db in try Data.fetchAll(db, sql: "SELECT sealed FROM registration").map { [UInt8]($0) } }
    }

    func testANewFileDrawsAnIDAndKeepsItAcrossOpens() async throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("a.sqlite").path
        var store = try open(path)
        let drawn = try await store.localRegistrationID()
        XCTAssertTrue(RegistrationID.validRange.contains(drawn.rawValue))
        let identity = try await store.localIdentity()
        try store.close()
        store = try open(path)
        let reopened = try await store.localRegistrationID()
        XCTAssertEqual(reopened, drawn)
        try store.close()
        XCTAssertEqual(try registrationRows(path).count, 1)

        // A new file for the same identity (a restore onto a fresh store) draws its own.
        let restored = try open(folder.appendingPathComponent("b.sqlite").path, identity: identity)
        defer { try? restored.close() }
        let restoredID = try await restored.localRegistrationID()
        XCTAssertNotEqual(restoredID, drawn, "a new installation draws a new id (2^-31 to collide)")
    }

    /// The id is sealed for its table and row: the file does not show it, and a value that does
    /// not open (altered, or moved from another file) stops the store at open.
    func testTheIDIsSealed() async throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("a.sqlite").path
        let store = try open(path)
        let id = try await store.localRegistrationID()
        try store.close()
        let sealed = try XCTUnwrap(try registrationRows(path).first)
        XCTAssertGreaterThan(sealed.count, 4)
        XCTAssertFalse(fileBytes(path).contains(subsequence: u32(id.rawValue)), "the id is not in clear")

        var altered = sealed
        altered[altered.count - 1] ^= 1
        try withRawDatabase(path) { try $0.execute(sql: "UPDATE registration SET sealed = ?", arguments: [Data(altered)]) }
        XCTAssertThrowsError(try open(path)) { XCTAssertEqual($0 as? SQLiteStoreError, .damagedValue(table: "registration")) }

        // Another file's sealed id (another file salt) does not open here either.
        let otherPath = folder.appendingPathComponent("b.sqlite").path
        try open(otherPath).close()
        let other = try XCTUnwrap(try registrationRows(otherPath).first)
        try withRawDatabase(path) { try $0.execute(sql: "UPDATE registration SET sealed = ?", arguments: [Data(other)]) }
        XCTAssertThrowsError(try open(path)) { XCTAssertEqual($0 as? SQLiteStoreError, .damagedValue(table: "registration")) }
    }

    /// The schema-1 fixture gains an id in the transaction that migrates it, and keeps it.
    func testTheSchema1FixtureDrawsItsIDWhenItMigrates() async throws {
        let path = try temporaryStorePath()
        try FileManager.default.copyItem(at: fixturesFolder.appendingPathComponent("schema1.sqlite"), to: URL(fileURLWithPath: path))
        XCTAssertEqual(try withRawDatabase(path) { try Int.fetchOne($0, sql: "PRAGMA user_version") }, 1)
        var store = try open(path)
        let drawn = try await store.localRegistrationID()
        try store.close()
        let (version, rows) = try withRawDatabase(path) { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version"), try Int.fetchOne(db, sql: "SELECT count(*) FROM registration"))
        }
        XCTAssertEqual(version, SQLiteProtocolStore.currentSchemaVersion)
        XCTAssertEqual(rows, 1)
        store = try open(path)
        defer { try? store.close() }
        let reopened = try await store.localRegistrationID()
        XCTAssertEqual(reopened, drawn)
    }

    /// A file of the schema before registration ids (a current file with the tables of that
    /// step and the later ones dropped and `user_version` set back; its other tables are
    /// exactly the earlier schema's), holding a
    /// session: it migrates, draws an id in the opening transaction, and its session keeps
    /// working (and the peer's id it recorded).
    func testAFileFromBeforeRegistrationIDsMigratesWithItsSessions() async throws {
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        let alice = address("alice", 1), bob = address("bob", 2)
        var aliceStore = try open(alicePath)
        let bobStore = try open(bobPath)
        defer { try? bobStore.close() }
        var aliceManager = SessionManager(store: aliceStore, trust: aliceStore, localAddress: alice)
        let bobManager = SessionManager(store: bobStore, trust: bobStore, localAddress: bob)
        let bobUpload = try await bobManager.maintainPreKeys()
        var published = try PublishedPreKeys(registering: bobUpload)
        try await aliceManager.processBundle(published.takeBundle(), for: bob)
        let first = try await aliceManager.encrypt(utf8("before"), to: bob)
        _ = try await bobManager.decrypt(first, from: alice)
        let oldID = try await aliceStore.localRegistrationID()
        try aliceStore.close()
        try withRawDatabase(alicePath) { db in
            // Schema 5: before registration ids (and the store epoch and send log after them).
            try db.execute(sql: "DROP TABLE registration")
            try db.execute(sql: "DROP TABLE store_epoch")
            try db.execute(sql: "DROP TABLE send_log")
            try db.execute(sql: "DROP TABLE known_ids")
            try db.execute(sql: "PRAGMA user_version = 5")
        }

        aliceStore = try open(alicePath)
        defer { try? aliceStore.close() }
        let newID = try await aliceStore.localRegistrationID()
        XCTAssertNotEqual(newID, oldID, "the migrated file drew an id (2^-31 to collide with the dropped one)")
        aliceManager = SessionManager(store: aliceStore, trust: aliceStore, localAddress: alice)
        let peerID = try await aliceManager.registrationID(of: bob)
        let bobID = try await bobStore.localRegistrationID()
        XCTAssertEqual(peerID, bobID, "the session kept the peer's id")
        let second = try await aliceManager.encrypt(utf8("after"), to: bob)
        let opened = try await bobManager.decrypt(second, from: alice).plaintext
        XCTAssertEqual(opened, utf8("after"))
        let reply = try await bobManager.encrypt(utf8("reply"), to: alice)
        let atAlice = try await aliceManager.decrypt(reply, from: bob).plaintext
        XCTAssertEqual(atAlice, utf8("reply"))
    }
}

private func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

/// `u32(value)`, big-endian.
private func u32(_ value: UInt32) -> [UInt8] { (0 ..< 4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
