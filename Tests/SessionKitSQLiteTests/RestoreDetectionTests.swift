import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import XCTest

/// Restore detection end to end through `SessionManager` on `SQLiteProtocolStore` files: Bob's
/// database file is put back to an older copy of itself (taken after `close()`, so the file
/// alone is the whole store) while his key file, which keeps the store epoch, stays current.
final class RestoreDetectionTests: XCTestCase {
    private let alice = address("alice", 1)
    private let bob = address("bob", 7)

    /// A header Bob sent: (ratchet key, counter). Two messages with the same pair share a
    /// message key.
    private struct Header: Hashable {
        let ratchetKey: [UInt8]
        let counter: UInt32

        init(_ message: [UInt8]) throws {
            let ratchet = try IncomingMessage(serialized: message).ratchetMessage
            ratchetKey = ratchet.ratchetKey.rawRepresentation
            counter = ratchet.counter
        }
    }

    private struct Bob {
        let store: SQLiteProtocolStore
        let manager: SessionManager

        init(path: String, keyPath: String, bob: ProtocolAddress) throws {
            let key = try StorageKey.loadOrCreateKeyFile(at: keyPath)
            store = try SQLiteProtocolStore(
                path: path, storageKey: key, epochKeeper: KeyFileEpochKeeper(path: keyPath),
                options: SQLiteStoreOptions(durability: .processCrash))
            manager = SessionManager(store: store, trust: store, localAddress: bob)
        }
    }

    func testAnOlderCopyOfTheFileIsDetectedAndNoMessageKeyIsUsedTwice() async throws {
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        let bobKeyPath = folder.appendingPathComponent("bob.key").path
        let backupPath = folder.appendingPathComponent("bob-backup.sqlite").path
        let group = try GroupID("restore-group")
        let aliceStore = try SQLiteProtocolStore(path: alicePath, storageKey: try fixtureStorageKey())
        let a = SessionManager(store: aliceStore, trust: aliceStore, localAddress: alice)
        var alicePublished = try PublishedPreKeys(registering: try await a.maintainPreKeys())
        var b = try Bob(path: bobPath, keyPath: bobKeyPath, bob: bob)
        XCTAssertNil(b.store.restoredFromOlderCopy, "a new file")
        let firstUpload = try await b.manager.maintainPreKeys()
        var bobPublished = try PublishedPreKeys(registering: firstUpload)
        let oldRegistrationID = try await b.store.localRegistrationID()

        var sent: [Header] = []
        func bobSends(_ text: String, on manager: SessionManager) async throws {
            let message = try await manager.encrypt(Array(text.utf8), to: alice)
            sent.append(try Header(message))
            let read = try await a.decrypt(message, from: bob)
            XCTAssertEqual(read.plaintext, Array(text.utf8))
        }

        // Alice starts; Bob replies twice and starts a group chain.
        try await a.processBundle(bobPublished.takeBundle(), for: bob)
        _ = try await b.manager.decrypt(try await a.encrypt(Array("m1".utf8), to: bob), from: alice)
        try await bobSends("r1", on: b.manager)
        try await bobSends("r2", on: b.manager)
        let oldDistribution = try await b.manager.senderKeyDistributionMessage(for: group)
        _ = try await b.manager.groupEncrypt(Array("g1".utf8), for: group)

        // The backup: the closed file alone.
        try b.store.close()
        try FileManager.default.copyItem(atPath: bobPath, toPath: backupPath)

        // Life goes on: three more messages on the same chain, one group message, Alice replies.
        b = try Bob(path: bobPath, keyPath: bobKeyPath, bob: bob)
        XCTAssertNil(b.store.restoredFromOlderCopy, "the current file")
        try await bobSends("r3", on: b.manager)
        try await bobSends("r4", on: b.manager)
        try await bobSends("r5", on: b.manager)
        _ = try await b.manager.groupEncrypt(Array("g2".utf8), for: group)
        _ = try await b.manager.decrypt(try await a.encrypt(Array("m2".utf8), to: bob), from: alice)
        let epochBeforeRestore = b.store.epoch.value
        try b.store.close()

        // The phone restores the old copy of the database file; the key file stays.
        XCTAssertFalse(FileManager.default.fileExists(atPath: bobPath + "-wal"))
        try FileManager.default.removeItem(atPath: bobPath)
        try FileManager.default.copyItem(atPath: backupPath, toPath: bobPath)
        b = try Bob(path: bobPath, keyPath: bobKeyPath, bob: bob)

        // Detected at open, and recovered before anything could send.
        let restore = try XCTUnwrap(b.store.restoredFromOlderCopy, "the old copy is detected")
        XCTAssertEqual(restore.keptEpoch, epochBeforeRestore)
        XCTAssertLessThan(try XCTUnwrap(restore.fileEpoch), epochBeforeRestore)
        XCTAssertEqual(restore.archivedSessionCount, 1)
        XCTAssertEqual(restore.droppedSendingChainCount, 1)
        XCTAssertEqual(restore.previousRegistrationID, oldRegistrationID)
        XCTAssertNotEqual(restore.registrationID, oldRegistrationID)
        let newRegistrationID = try await b.store.localRegistrationID()
        XCTAssertEqual(newRegistrationID, restore.registrationID)
        XCTAssertGreaterThan(b.store.epoch.value, epochBeforeRestore)
        XCTAssertEqual(try StorageKey.readKeyFileEpoch(at: bobKeyPath), b.store.epoch)

        // Nothing is sent from the old chains.
        await assertThrows(SessionError.noSession) { _ = try await b.manager.encrypt(Array("r3 again".utf8), to: self.alice) }
        await assertThrows(SessionError.noSession) { _ = try await b.manager.groupEncrypt(Array("g2 again".utf8), for: group) }
        let record = try await b.store.loadSession(for: alice)
        XCTAssertNil(record?.currentSession)
        XCTAssertEqual(record?.previousSessions.first?.isArchived, true)

        // A late message from Alice on the old session still decrypts (archived: receive only).
        let late = try await b.manager.decrypt(try await a.encrypt(Array("m3".utf8), to: bob), from: alice)
        XCTAssertEqual(late.plaintext, Array("m3".utf8))
        await assertThrows(SessionError.noSession) { _ = try await b.manager.encrypt(Array("after m3".utf8), to: self.alice) }

        // The prekeys rotate: a new signed prekey, new one-time prekeys, the new registration
        // id, which makes the server drop what Bob published before.
        let upload = try await b.manager.maintainPreKeys()
        XCTAssertEqual(upload.registrationID, newRegistrationID)
        let newSigned = try XCTUnwrap(upload.signedPreKey, "the signed prekey rotates")
        XCTAssertNotEqual(newSigned.id, firstUpload.signedPreKey?.id)
        XCTAssertEqual(upload.oneTimePreKeys.count, PreKeyPolicy.default.oneTimePreKeyBatchSize)
        XCTAssertTrue(Set(upload.oneTimePreKeys.map(\.id)).isDisjoint(with: firstUpload.oneTimePreKeys.map(\.id)))
        XCTAssertThrowsError(try bobPublished.merge(upload)) {
            XCTAssertEqual($0 as? PublishedPreKeysError, .otherRegistration(held: oldRegistrationID, uploaded: newRegistrationID))
        }
        bobPublished = try PublishedPreKeys(registering: upload)
        let heldOneTime = try await b.store.loadPreKeys()?.oneTimePreKeys.map(\.id) ?? []
        XCTAssertEqual(Set(heldOneTime), Set(upload.oneTimePreKeys.map(\.id)), "the old one-time prekeys are gone")

        // Recovery: Bob starts a new session from Alice's bundle; she reads him and replies.
        try await b.manager.processBundle(alicePublished.takeBundle(), for: alice)
        try await bobSends("after the restore", on: b.manager)
        try await bobSends("and again", on: b.manager)
        let reply = try await a.encrypt(Array("welcome back".utf8), to: bob)
        let readReply = try await b.manager.decrypt(reply, from: alice)
        XCTAssertEqual(readReply.plaintext, Array("welcome back".utf8))
        try await bobSends("after the reply", on: b.manager)
        let peerID = try await a.registrationID(of: bob)
        XCTAssertEqual(peerID, newRegistrationID, "Alice's new session records Bob's new registration id")

        // A new group chain (another chain id) once Bob distributes again.
        let newDistribution = try await b.manager.senderKeyDistributionMessage(for: group)
        XCTAssertNotEqual(newDistribution.chainID, oldDistribution.chainID)

        // No (ratchet key, counter) pair was sent twice.
        XCTAssertEqual(sent.count, 8)
        XCTAssertEqual(Set(sent).count, sent.count, "a message key was used twice: \(sent)")

        // The detection is reported once: the next open finds the file current.
        try b.store.close()
        b = try Bob(path: bobPath, keyPath: bobKeyPath, bob: bob)
        XCTAssertNil(b.store.restoredFromOlderCopy)
        let stillNew = try await b.store.localRegistrationID()
        XCTAssertEqual(stillNew, newRegistrationID)
        try b.store.close()
        try aliceStore.close()
    }

    func testAKeeperBehindTheFileIsNoRestore() throws {
        // A crash between the file's commit and the key file's write leaves the file ahead.
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("bob.sqlite").path
        let keyPath = folder.appendingPathComponent("bob.key").path
        var b = try Bob(path: path, keyPath: keyPath, bob: bob)
        try b.store.close()
        let keyFileBefore = try Data(contentsOf: URL(fileURLWithPath: keyPath))
        b = try Bob(path: path, keyPath: keyPath, bob: bob)
        let epoch = b.store.epoch.value
        try b.store.close()
        // The key file as it was before that open's write.
        try FileManager.default.removeItem(atPath: keyPath)
        XCTAssertTrue(FileManager.default.createFile(atPath: keyPath, contents: keyFileBefore, attributes: [.posixPermissions: 0o600]))
        XCTAssertEqual(try StorageKey.readKeyFileEpoch(at: keyPath)?.value, epoch - 1)
        b = try Bob(path: path, keyPath: keyPath, bob: bob)
        XCTAssertNil(b.store.restoredFromOlderCopy, "a file ahead of its keeper is no restore")
        XCTAssertEqual(b.store.epoch.value, epoch + 1)
        try b.store.close()
    }

    func testAVersion1KeyFileIsUpgradedAndDetectsNothingTheFirstTime() throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("bob.sqlite").path
        let keyPath = folder.appendingPathComponent("bob.key").path
        let key = try StorageKey.createKeyFile(at: keyPath)
        let keyBytes = key.withUnsafeBytes { Array($0) }
        // A store that predates the keeper: opened without one, twice.
        try SQLiteProtocolStore(path: path, storageKey: key).close()
        try SQLiteProtocolStore(path: path, storageKey: key).close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: keyPath)).count, 32)
        XCTAssertNil(try StorageKey.readKeyFileEpoch(at: keyPath))

        let store = try SQLiteProtocolStore(path: path, storageKey: key, epochKeeper: KeyFileEpochKeeper(path: keyPath))
        XCTAssertNil(store.restoredFromOlderCopy)
        XCTAssertEqual(store.epoch.value, 3, "one epoch per open")
        try store.close()
        let contents = try Data(contentsOf: URL(fileURLWithPath: keyPath))
        XCTAssertEqual(contents.count, 61)
        XCTAssertEqual(Array(contents.prefix(5)), Array("SKKF".utf8) + [2])
        XCTAssertEqual(try StorageKey.readKeyFile(at: keyPath).withUnsafeBytes { Array($0) }, keyBytes, "the same key")
        XCTAssertEqual(try StorageKey.readKeyFileEpoch(at: keyPath), store.epoch)
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
    }

    func testAnotherStoreWithTheSameKeeperRaisesNoFalseAlarm() throws {
        let folder = try temporaryFolder()
        let keyPath = folder.appendingPathComponent("shared.key").path
        let first = folder.appendingPathComponent("first.sqlite").path
        let second = folder.appendingPathComponent("second.sqlite").path
        for _ in 0 ..< 3 { try Bob(path: first, keyPath: keyPath, bob: bob).store.close() }
        let other = try Bob(path: second, keyPath: keyPath, bob: bob)
        XCTAssertNil(other.store.restoredFromOlderCopy, "a new file with another salt is another store")
        XCTAssertEqual(other.store.epoch.value, 1)
        try other.store.close()
        let again = try Bob(path: first, keyPath: keyPath, bob: bob)
        XCTAssertNil(again.store.restoredFromOlderCopy, "the keeper now holds the other store's epoch")
        try again.store.close()
    }

    func testAdvancingTheEpochCatchesACopyTakenSinceTheOpen() async throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("bob.sqlite").path
        let keyPath = folder.appendingPathComponent("bob.key").path
        let copyPath = folder.appendingPathComponent("copy.sqlite").path
        let b = try Bob(path: path, keyPath: keyPath, bob: bob)
        try b.store.close()
        try FileManager.default.copyItem(atPath: path, toPath: copyPath)
        // Without advancing, the copy of a file opened once and put back is current.
        let reopened = try Bob(path: copyPath, keyPath: keyPath, bob: bob)
        XCTAssertNil(reopened.store.restoredFromOlderCopy)
        // The app goes to the background: the epoch moves on, and an older copy is caught.
        try FileManager.default.copyItem(atPath: copyPath, toPath: path + ".older")
        let advanced = try await reopened.store.advanceEpoch()
        XCTAssertEqual(advanced.value, reopened.store.epoch.value + 1)
        XCTAssertEqual(try StorageKey.readKeyFileEpoch(at: keyPath), advanced)
        try reopened.store.close()
        let older = try Bob(path: path + ".older", keyPath: keyPath, bob: bob)
        XCTAssertNotNil(older.store.restoredFromOlderCopy)
        try older.store.close()
    }

    func testAFileFromBeforeTheEpochMigratesAndCountsAsBehindAKeptEpochOfItself() throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("bob.sqlite").path
        let keyPath = folder.appendingPathComponent("bob.key").path
        try Bob(path: path, keyPath: keyPath, bob: bob).store.close()
        try Bob(path: path, keyPath: keyPath, bob: bob).store.close()
        XCTAssertEqual(try StorageKey.readKeyFileEpoch(at: keyPath)?.value, 2)
        // A copy from schema 6, before the store epoch: no table, no value.
        try withRawDatabase(path) { db in
            try db.execute(sql: "DROP TABLE store_epoch")
            try db.execute(sql: "DROP TABLE send_log")
            try db.execute(sql: "DROP TABLE known_ids")
            try db.execute(sql: "PRAGMA user_version = 6")
        }
        let b = try Bob(path: path, keyPath: keyPath, bob: bob)
        let restore = try XCTUnwrap(b.store.restoredFromOlderCopy, "the keeper holds an epoch of this very file")
        XCTAssertNil(restore.fileEpoch)
        XCTAssertEqual(restore.keptEpoch, 2)
        XCTAssertEqual(b.store.epoch.value, 3)
        try b.store.close()
        // Without a kept epoch (a first open with the keeper), a file from schema 6 migrates quietly.
        let plain = folder.appendingPathComponent("plain.sqlite").path
        try SQLiteProtocolStore(path: plain, storageKey: try fixtureStorageKey()).close()
        try withRawDatabase(plain) { db in
            try db.execute(sql: "DROP TABLE store_epoch")
            try db.execute(sql: "DROP TABLE send_log")
            try db.execute(sql: "DROP TABLE known_ids")
            try db.execute(sql: "PRAGMA user_version = 6")
        }
        let migrated = try SQLiteProtocolStore(path: plain, storageKey: try fixtureStorageKey())
        XCTAssertNil(migrated.restoredFromOlderCopy)
        XCTAssertEqual(migrated.epoch.value, 1)
        try migrated.close()
    }

    func testACrashAfterTheRecoveryCommittedButBeforeTheKeeperWasWrittenLosesNothing() async throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("bob.sqlite").path
        let copyPath = folder.appendingPathComponent("copy.sqlite").path
        let keeper = MemoryEpochKeeper()
        func open() throws -> SQLiteProtocolStore {
            try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), epochKeeper: keeper)
        }
        // Bob has a session with Alice; the file is copied, then opened again (the keeper moves on).
        let aliceStore = try SQLiteProtocolStore(path: folder.appendingPathComponent("alice.sqlite").path, storageKey: try fixtureStorageKey())
        let alice = SessionManager(store: aliceStore, trust: aliceStore, localAddress: self.alice)
        var store = try open()
        let bobManager = SessionManager(store: store, trust: store, localAddress: bob)
        var published = try PublishedPreKeys(registering: try await bobManager.maintainPreKeys())
        try await alice.processBundle(published.takeBundle(), for: bob)
        _ = try await bobManager.decrypt(try await alice.encrypt(Array("hi".utf8), to: bob), from: self.alice)
        _ = try await bobManager.encrypt(Array("hello".utf8), to: self.alice)
        let oldID = try await store.localRegistrationID()
        try store.close()
        try FileManager.default.copyItem(atPath: path, toPath: copyPath)
        try open().close()

        // The old copy is put back; the open that detects it dies before the keeper's write.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: copyPath, toPath: path)
        keeper.failsWrites = true
        XCTAssertThrowsError(try open()) { XCTAssertEqual($0 as? SQLiteStoreError, .database("the keeper's disk is full")) }

        // The next open finds the file ahead of the keeper (no second detection), and the
        // recovery that committed with the file's epoch is there.
        keeper.failsWrites = false
        store = try open()
        XCTAssertNil(store.restoredFromOlderCopy)
        let newID = try await store.localRegistrationID()
        XCTAssertNotEqual(newID, oldID)
        let record = try await store.loadSession(for: self.alice)
        XCTAssertNil(record?.currentSession)
        XCTAssertEqual(record?.previousSessions.first?.isArchived, true)
        XCTAssertEqual(keeper.epoch, store.epoch)
        try store.close()
        try aliceStore.close()
    }

    func testTheFileEpochIsSealed() throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("bob.sqlite").path
        let other = folder.appendingPathComponent("other.sqlite").path
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey()).close()
        try SQLiteProtocolStore(path: other, storageKey: try fixtureStorageKey()).close()
        // Another file's sealed epoch (another salt, so other subkeys) does not open here.
        let foreign = try withRawDatabase(other) { try Data.fetchOne($0, sql: "SELECT sealed FROM store_epoch WHERE id = 1") }
        try withRawDatabase(path) { try $0.execute(sql: "UPDATE store_epoch SET sealed = ? WHERE id = 1", arguments: [foreign]) }
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .damagedValue(table: "store_epoch"))
        }
    }

    func testAKeyFileWithTheLengthOfVersion2ButNoMagicIsRefused() throws {
        let folder = try temporaryFolder()
        let keyPath = folder.appendingPathComponent("odd.key").path
        XCTAssertTrue(FileManager.default.createFile(
            atPath: keyPath, contents: Data(repeating: 7, count: 61), attributes: [.posixPermissions: 0o600]))
        XCTAssertThrowsError(try StorageKey.readKeyFile(at: keyPath)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: keyPath, problem: .unrecognizedFormat))
        }
    }

    func testStoreEpochStoredForm() throws {
        let epoch = try StoreEpoch(fileID: Array(1 ... 16), value: 0x0102_0304_0506_0708)
        XCTAssertEqual(epoch.serialized, Array(1 ... 16) + [1, 2, 3, 4, 5, 6, 7, 8])
        XCTAssertEqual(try StoreEpoch(serialized: epoch.serialized), epoch)
        XCTAssertThrowsError(try StoreEpoch(serialized: Array(epoch.serialized.dropLast())))
        XCTAssertThrowsError(try StoreEpoch(fileID: [1, 2, 3], value: 1))
    }
}

/// A keeper in memory, whose writes can be made to fail (a crash between the file's commit and
/// the keeper's write).
private final class MemoryEpochKeeper: StoreEpochKeeper, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: StoreEpoch?
    private var failing = false

    var failsWrites: Bool {
        get { lock.withLock { failing } }
        set { lock.withLock { failing = newValue } }
    }

    var epoch: StoreEpoch? { lock.withLock { stored } }

    func readEpoch() throws(SQLiteStoreError) -> StoreEpoch? { epoch }

    func writeEpoch(_ epoch: StoreEpoch) throws(SQLiteStoreError) {
        lock.lock()
        defer { lock.unlock() }
        if failing { throw .database("the keeper's disk is full") }
        stored = epoch
    }
}
