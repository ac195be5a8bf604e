import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SessionKitStoreConformance
import SignalPrimitives
import XCTest

/// Opening, the identity, and the prekeys (`IdentityKeyStore`, `PreKeyStore`).
final class ProtocolStoreTests: XCTestCase {
    private let now = Timestamp(secondsSince1970: 1_700_000_000)

    func testANewStoreCreatesAnIdentityThatSurvivesReopening() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let created = try await store.localIdentity()
        try store.close()
        let reopened = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let loaded = try await reopened.localIdentity()
        XCTAssertEqual(loaded.publicKey, created.publicKey)
        XCTAssertEqual(loaded.serialized(), created.serialized())
        let version = try withRawDatabase(path) { try Int.fetchOne($0, sql: "PRAGMA user_version") }
        XCTAssertEqual(version, SQLiteProtocolStore.currentSchemaVersion)
    }

    func testAGivenIdentityIsStoredAndAnotherOneIsRefusedLater() async throws {
        let path = try temporaryStorePath()
        let identity = try IdentityKeyPair(seed: [UInt8](repeating: 7, count: 32))
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), identity: identity)
        let stored = try await store.localIdentity()
        XCTAssertEqual(stored.publicKey, identity.publicKey)
        try store.close()
        // The same identity again is fine; another one is refused.
        let again = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), identity: identity)
        try again.close()
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), identity: try IdentityKeyPair())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .identityMismatch)
        }
    }

    func testTheFileIsCreatedReadableByItsOwnerOnly() throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        defer { try? store.close() }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
    }

    func testPreKeysRoundTripAndAnswerLookups() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let none = try await store.loadPreKeys()
        XCTAssertNil(none)
        let identity = try await store.localIdentity()
        let keys = try LocalPreKeys(identity: identity, now: now)
        let stored: Int = try await store.updatePreKeys { current in
            XCTAssertNil(current)
            current = keys
            return 42
        }
        XCTAssertEqual(stored, 42)
        try store.close()

        let reopened = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let loaded = try await reopened.loadPreKeys()
        XCTAssertEqual(loaded?.serialized(), keys.serialized())
        let oneTime = try XCTUnwrap(keys.oneTimePreKeys.first)
        XCTAssertNotNil(loaded?.signedPreKey(id: keys.currentSignedPreKey.key.id))
        XCTAssertNotNil(loaded?.oneTimePreKey(id: oneTime.id))

        // Leaving nil deletes them.
        try await reopened.updatePreKeys { $0 = nil }
        let deleted = try await reopened.loadPreKeys()
        XCTAssertNil(deleted)
    }

    func testAThrowingUpdateStoresNothing() async throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        let identity = try await store.localIdentity()
        let keys = try LocalPreKeys(identity: identity, now: now)
        try await store.updatePreKeys { $0 = keys }
        let before = try await store.loadPreKeys()?.serialized()

        do {
            try await store.updatePreKeys { current throws(SessionError) in
                _ = current?.removeOneTimePreKey(id: keys.oneTimePreKeys[0].id)
                current = nil
                throw .unknownPreKey
            }
            XCTFail("the update's error must be rethrown")
        } catch {
            XCTAssertEqual(error, .unknownPreKey)
        }
        let after = try await store.loadPreKeys()?.serialized()
        XCTAssertEqual(after, before)
    }

    func testConcurrentUpdatesAreSerialized() async throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        let identity = try await store.localIdentity()
        let keys = try LocalPreKeys(identity: identity, now: now)
        let ids = keys.oneTimePreKeys.map(\.id)
        XCTAssertGreaterThan(ids.count, 1)
        try await store.updatePreKeys { $0 = keys }
        // Every task removes one key in its own read-modify-write: none of the removals is lost.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in ids {
                group.addTask { try await store.updatePreKeys { _ = $0?.removeOneTimePreKey(id: id) } }
            }
            try await group.waitForAll()
        }
        let remaining = try await store.loadPreKeys()?.oneTimePreKeyCount
        XCTAssertEqual(remaining, 0)
    }

    func testTwoStoresOnOneFileSeeEachOthersWrites() async throws {
        let path = try temporaryStorePath()
        let first = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let second = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let firstIdentity = try await first.localIdentity()
        let secondIdentity = try await second.localIdentity()
        XCTAssertEqual(firstIdentity.publicKey, secondIdentity.publicKey)
        let keys = try LocalPreKeys(identity: firstIdentity, now: now)
        try await first.updatePreKeys { $0 = keys }
        let seen = try await second.loadPreKeys()?.serialized()
        XCTAssertEqual(seen, keys.serialized())
    }

    func testAMissingFileIsAnErrorWhenCreatingIsNotAllowed() throws {
        let path = try temporaryStorePath()
        XCTAssertThrowsError(try SQLiteProtocolStore(
            path: path, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(createIfMissing: false))) {
            XCTAssertEqual($0 as? SQLiteStoreError, .cannotOpen(path: path, reason: "no such file"))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testAFileInAMissingFolderCannotBeOpened() throws {
        let path = try temporaryFolder().appendingPathComponent("no/such/folder/account.sqlite").path
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())) { error in
            guard case let .cannotOpen(errorPath, _)? = error as? SQLiteStoreError else { return XCTFail("got \(error)") }
            XCTAssertEqual(errorPath, path)
        }
    }

    func testAFileThatIsNotADatabaseIsATypedError() throws {
        let path = try temporaryStorePath()
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .notADatabase(path: path))
        }
    }

    func testAnotherApplicationsDatabaseIsRefusedAndLeftAlone() throws {
        let path = try temporaryStorePath()
        try withRawDatabase(path) { try $0.execute(sql: "CREATE TABLE notes (body TEXT)") }
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .notAStore(path: path))
        }
        let (tables, journal) = try withRawDatabase(path) { db in
            (try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"),
             try String.fetchOne(db, sql: "PRAGMA journal_mode"))
        }
        XCTAssertEqual(tables, ["notes"])
        XCTAssertEqual(journal, "delete", "not even switched to WAL")
    }

    func testDumpingTheStoreShowsNoKeyMaterial() throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        defer { try? store.close() }
        var dumped = ""
        dump(store, to: &dumped)
        dump(try fixtureStorageKey(), to: &dumped)
        XCTAssertTrue(dumped.contains("StoreKeys(redacted)"), dumped)
        XCTAssertFalse(dumped.contains("000102030405"), "the storage key's bytes must not be dumped")
        let seed = try XCTUnwrap(store.identity.serialized()[6 ..< 38].map { String(format: "%02x", $0) }.joined().prefix(16))
        XCTAssertFalse(dumped.contains(String(seed)))
    }

    func testErrorsDescribeThemselvesWithoutSecrets() {
        let key = StorageKey.generate()
        XCTAssertEqual(key.description, "StorageKey(32 bytes, redacted)")
        XCTAssertEqual(SQLiteStoreError.damagedValue(table: "trust").description,
                       "damaged value in table trust: it does not open under this store's key")
        XCTAssertEqual(SQLiteStoreError.newerSchema(found: 2, supported: 1).description,
                       "the file has schema version 2, newer than this library supports (1)")
        XCTAssertEqual(KeyFileProblem.permissionsTooOpen(mode: 0o644).description,
                       "permissions 0644 let the group or others access it (0600 required)")
    }
}

/// The store conformance kit (`SessionKitStoreConformance`) against `SQLiteProtocolStore`.
final class SQLiteStoreConformanceTests: XCTestCase {
    func testTheSQLiteStorePassesEveryConformanceRule() async throws {
        let folder = try temporaryFolder()
        var stores: [SQLiteProtocolStore] = []
        let failures = await StoreConformance.failures { () async throws -> any ProtocolStore in
            let store = try SQLiteProtocolStore(
                path: folder.appendingPathComponent("conformance-\(stores.count).sqlite").path, storageKey: try fixtureStorageKey(),
                options: SQLiteStoreOptions(durability: .processCrash))
            stores.append(store)
            return store
        }
        for store in stores { try store.close() }
        XCTAssertEqual(stores.count, StoreConformanceRule.allCases.count, "one store per rule")
        XCTAssertEqual(failures, [])
    }
}
