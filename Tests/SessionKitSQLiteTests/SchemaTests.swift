import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// Schema versions: files written by older schemas open (and migrate); files from a newer
/// library are refused untouched.
final class SchemaTests: XCTestCase {
    /// What `Fixtures/schema1.sqlite` holds (see `testWriteTheSchema1Fixture`).
    enum Schema1Fixture {
        static let fileName = "schema1.sqlite"
        static let identitySeed = [UInt8](repeating: 0x11, count: 32)
        static let bob = address("fixture-bob", 1)
        static let carol = address("fixture-carol", 2)
        static let bobKey = [UInt8](repeating: 0xb0, count: 32)
        static let carolKey = [UInt8](repeating: 0xc0, count: 32)
        static let carolNewKey = [UInt8](repeating: 0xc1, count: 32)
        static let conversation = "fixture-conversation"
        static let messages: [(id: String, timestamp: Int64, text: String)] = [
            ("m1", 1_000, "first message"), ("m2", 2_000, "second message"), ("m3", 2_000, "third message, same time"),
        ]
    }

    func testAFileFromANewerSchemaIsRefusedUntouched() throws {
        let path = try temporaryStorePath()
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey()).close()
        let newer = SQLiteProtocolStore.currentSchemaVersion + 1
        try withRawDatabase(path) { try $0.execute(sql: "PRAGMA user_version = \(newer)") }
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .newerSchema(found: newer, supported: SQLiteProtocolStore.currentSchemaVersion))
        }
        let version = try withRawDatabase(path) { try Int.fetchOne($0, sql: "PRAGMA user_version") }
        XCTAssertEqual(version, newer)
    }

    func testANewFileIsMarkedWithTheApplicationIDAndTheCurrentSchema() throws {
        let path = try temporaryStorePath()
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey()).close()
        let (applicationID, version, tables) = try withRawDatabase(path) { db in
            (try Int32.fetchOne(db, sql: "PRAGMA application_id"), try Int.fetchOne(db, sql: "PRAGMA user_version"),
             try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"))
        }
        XCTAssertEqual(applicationID, 0x534B_5351)
        XCTAssertEqual(version, 11)
        XCTAssertEqual(tables, ["archive", "group_members", "identity", "known_ids", "meta", "pending_group_messages", "prekey_replay_records", "prekeys",
                                "receiver_chains", "receiver_states", "registration", "retired_generations", "send_log", "sending_chains", "session_orders",
                                "session_states", "sessions", "skipped_keys", "sqlite_sequence", "store_epoch", "trust", "trust_users"])
    }

    func testAFailedMigrationLeavesTheFileAsItWas() throws {
        // A file that claims schema 0 but already has a table the first step creates: the
        // step fails, and the transaction leaves no table, version or key check behind.
        let path = try temporaryStorePath()
        try withRawDatabase(path) { db in
            try db.execute(sql: "PRAGMA application_id = \(Schema.applicationID)")
            try db.execute(sql: "CREATE TABLE trust (x)")
        }
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey()))
        let (version, tables) = try withRawDatabase(path) { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version"),
             try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
        }
        XCTAssertEqual(version, 0)
        XCTAssertEqual(tables, ["trust"])
    }

    /// Schema 1's per-device trust rows are folded into the user's record by the first write
    /// that touches the user, and deleted; the record survives a reopen; a user whose rows were
    /// not folded yet still reads.
    func testTheSchema1TrustRowsAreFoldedPerUserByTheFirstWrite() async throws {
        let path = try temporaryStorePath()
        try FileManager.default.copyItem(at: fixturesFolder.appendingPathComponent(Schema1Fixture.fileName), to: URL(fileURLWithPath: path))
        var store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let bobKey = try Ed25519.PublicKey(rawRepresentation: Schema1Fixture.bobKey)
        let tablet = try ProtocolAddress(userID: Schema1Fixture.bob.userID, deviceID: 5)
        let observation = try await store.observeIdentity(bobKey, for: tablet)
        XCTAssertEqual(observation, .newDevice, "bob's verified key on a device not seen before")
        try store.close()
        let (legacyRows, userRows) = try withRawDatabase(path) { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM trust"), try Int.fetchOne(db, sql: "SELECT count(*) FROM trust_users"))
        }
        XCTAssertEqual(legacyRows, 1, "carol's row is left until carol is written")
        XCTAssertEqual(userRows, 1)
        store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        defer { try? store.close() }
        let bob = try await store.record(forUser: Schema1Fixture.bob.userID)
        XCTAssertEqual(bob, TrustRecord(identityKey: bobKey, status: .verified, previousIdentityKey: nil, devices: [1, 5]))
        let carol = try await store.record(forUser: Schema1Fixture.carol.userID)
        XCTAssertEqual(carol?.identityKey, try Ed25519.PublicKey(rawRepresentation: Schema1Fixture.carolNewKey))
        XCTAssertEqual(carol?.isAwaitingAcceptance, true)
    }

    /// The committed file written by schema 1 opens with the fixed test key, and its values read.
    func testTheSchema1FixtureOpensAndItsValuesRead() async throws {
        let source = fixturesFolder.appendingPathComponent(Schema1Fixture.fileName)
        XCTAssertTrue(FileManager.default.fileExists(atPath: source.path), "missing fixture \(source.path)")
        let path = try temporaryStorePath()
        try FileManager.default.copyItem(at: source, to: URL(fileURLWithPath: path))
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        defer { try? store.close() }

        let identity = try await store.localIdentity()
        XCTAssertEqual(identity.publicKey, try IdentityKeyPair(seed: Schema1Fixture.identitySeed).publicKey)
        let preKeys = try await store.loadPreKeys()
        XCTAssertEqual(preKeys?.currentSignedPreKey.key.id, 1)
        XCTAssertEqual(preKeys?.oneTimePreKeyCount, PreKeyPolicy.default.oneTimePreKeyBatchSize)

        let bob = try await store.record(forUser: Schema1Fixture.bob.userID)
        // Schema 1's per-device records fold into one record per user (schema 3).
        XCTAssertEqual(bob, TrustRecord(
            identityKey: try Ed25519.PublicKey(rawRepresentation: Schema1Fixture.bobKey), status: .verified, previousIdentityKey: nil,
            devices: [Schema1Fixture.bob.deviceID]))
        let carol = try await store.record(forUser: Schema1Fixture.carol.userID)
        XCTAssertEqual(carol, TrustRecord(
            identityKey: try Ed25519.PublicKey(rawRepresentation: Schema1Fixture.carolNewKey), status: .unverified,
            previousIdentityKey: try Ed25519.PublicKey(rawRepresentation: Schema1Fixture.carolKey), devices: [Schema1Fixture.carol.deviceID]))

        let page = try await store.archivedMessages(inConversation: Schema1Fixture.conversation, limit: 10)
        XCTAssertEqual(page.damagedCount, 0)
        XCTAssertNil(page.nextCursor)
        XCTAssertEqual(Set(page.messages.prefix(2).map(\.messageID)), ["m2", "m3"])
        XCTAssertEqual(page.messages.last?.messageID, "m1")
        let texts = Dictionary(uniqueKeysWithValues: page.messages.map { ($0.messageID, String(decoding: $0.plaintext.bytes, as: UTF8.self)) })
        XCTAssertEqual(texts, Dictionary(uniqueKeysWithValues: Schema1Fixture.messages.map { ($0.id, $0.text) }))
    }

    func testTheSchema1FixtureRefusesAnotherKey() throws {
        let path = try temporaryStorePath()
        try FileManager.default.copyItem(at: fixturesFolder.appendingPathComponent(Schema1Fixture.fileName), to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: StorageKey.generate())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .wrongStorageKey)
        }
    }
}
