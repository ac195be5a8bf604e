import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// What the file holds without the key: sealed values bound to their rows, hashed ids, and
/// nothing an attacker can read, move or change without detection.
final class EncryptionAtRestTests: XCTestCase {
    private let bob = address("bob-user-id-5d1e", 1)
    private let carol = address("carol-user-id-9a2c", 3)
    private let bobKey = identityKey(0xb0)
    private let carolKey = identityKey(0xc0)

    func testAWrongStorageKeyIsATypedErrorAtOpen() throws {
        let path = try temporaryStorePath()
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey()).close()
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: StorageKey.generate())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .wrongStorageKey)
        }
        // The right key still opens it: the failed attempt changed nothing.
        XCTAssertNoThrow(try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey()).close())
    }

    func testADamagedTrustRecordIsATypedErrorNamingTheTableAndOtherRowsStayReadable() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        _ = try await store.observeIdentity(bobKey, for: bob)
        _ = try await store.observeIdentity(carolKey, for: carol)
        let bobRow = store.sealer.rowKey(Array(bob.userID.utf8), in: .trustUser)
        // Flip one ciphertext byte of Bob's record with raw SQL.
        try withRawDatabase(path) { db in
            var sealed = try XCTUnwrap(Data.fetchOne(db, sql: "SELECT sealed FROM trust_users WHERE user_hash = ?", arguments: [Data(bobRow)]))
            sealed[30] ^= 0x01
            try db.execute(sql: "UPDATE trust_users SET sealed = ? WHERE user_hash = ?", arguments: [sealed, Data(bobRow)])
        }
        let error = await thrownError { _ = try await store.record(forUser: self.bob.userID) }
        XCTAssertEqual(error as? VerificationError, .storage("SessionKitSQLite: damaged value in table trust_users: it does not open under this store's key"))
        let carolRecord = try await store.record(forUser: carol.userID)
        XCTAssertEqual(carolRecord, TrustRecord(identityKey: carolKey, status: .trusted, previousIdentityKey: nil, devices: [carol.deviceID]))
        // Removing the damaged record and seeing Bob again works.
        try await store.removeRecord(forUser: bob.userID)
        let event = try await store.observeIdentity(bobKey, for: bob)
        XCTAssertEqual(event, .firstUse)
    }

    func testADamagedIdentityIsATypedErrorAtOpen() throws {
        let path = try temporaryStorePath()
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey()).close()
        try withRawDatabase(path) { db in
            try db.execute(sql: "UPDATE identity SET sealed = substr(sealed, 1, 40) || zeroblob(1) || substr(sealed, 42)")
        }
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .damagedValue(table: "identity"))
        }
    }

    func testADamagedPreKeyBlobIsAStorageErrorNamingTheTable() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let identity = try await store.localIdentity()
        let keys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 1_700_000_000))
        try await store.updatePreKeys { $0 = keys }
        try withRawDatabase(path) { db in try db.execute(sql: "UPDATE prekeys SET sealed = substr(sealed, 1, length(sealed) - 1)") }
        let error = await thrownError { _ = try await store.loadPreKeys() }
        XCTAssertEqual(error as? SessionError, .damagedState(.preKeys))
    }

    func testAValueCopiedToAnotherRowDoesNotOpen() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        _ = try await store.observeIdentity(bobKey, for: bob)
        try await store.markVerified(carolKey, forUser: carol.userID)
        let bobRow = store.sealer.rowKey(Array(bob.userID.utf8), in: .trustUser)
        let carolRow = store.sealer.rowKey(Array(carol.userID.utf8), in: .trustUser)
        // An attacker gives Carol's "verified" record to Bob.
        try withRawDatabase(path) { db in
            try db.execute(
                sql: "UPDATE trust_users SET sealed = (SELECT sealed FROM trust_users WHERE user_hash = ?) WHERE user_hash = ?",
                arguments: [Data(carolRow), Data(bobRow)])
        }
        let error = await thrownError { _ = try await store.status(forUser: self.bob.userID) }
        XCTAssertEqual(error as? VerificationError, .storage("SessionKitSQLite: damaged value in table trust_users: it does not open under this store's key"))
        let carolStatus = try await store.status(forUser: carol.userID)
        XCTAssertEqual(carolStatus, .verified)
    }

    func testAValueCopiedToAnotherTableDoesNotOpen() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        try store.close()
        // The identity's sealed blob (a valid IdentityKeyPair blob) put in the prekeys row.
        try withRawDatabase(path) { db in
            try db.execute(sql: "INSERT INTO prekeys (id, sealed) SELECT 1, sealed FROM identity")
        }
        let reopened = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let error = await thrownError { _ = try await reopened.loadPreKeys() }
        XCTAssertEqual(error as? SessionError, .damagedState(.preKeys))
    }

    func testAValueCopiedFromAnotherFileWithTheSameKeyDoesNotOpen() throws {
        let folder = try temporaryFolder()
        let first = folder.appendingPathComponent("first.sqlite").path
        let second = folder.appendingPathComponent("second.sqlite").path
        try SQLiteProtocolStore(path: first, storageKey: try fixtureStorageKey()).close()
        try SQLiteProtocolStore(path: second, storageKey: try fixtureStorageKey()).close()
        let firstIdentity = try withRawDatabase(first) { try Data.fetchOne($0, sql: "SELECT sealed FROM identity") }
        try withRawDatabase(second) { try $0.execute(sql: "UPDATE identity SET sealed = ?", arguments: [firstIdentity]) }
        XCTAssertThrowsError(try SQLiteProtocolStore(path: second, storageKey: try fixtureStorageKey())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .damagedValue(table: "identity"))
        }
    }

    func testTheFileAndItsWALHoldNoIdOrPlaintext() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let conversation = "group-id-conversation-3e8f41"
        let messageID = "message-id-b7c2d9"
        let plaintext = Array("the plaintext of a secret message 42".utf8)
        _ = try await store.observeIdentity(bobKey, for: bob)
        try await store.markVerified(carolKey, forUser: carol.userID)
        try await store.appendArchivedMessage(plaintext, messageID: messageID, conversationID: conversation, timestamp: 1000)
        try await store.appendArchivedMessage(plaintext, messageID: messageID + "-2", conversationID: bob.userID, timestamp: 1001)
        let identity = try await store.localIdentity()
        let keys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 1_700_000_000))
        try await store.updatePreKeys { $0 = keys }
        let secrets: [(String, [UInt8])] = [
            ("Bob's user id", Array(bob.userID.utf8)), ("Carol's user id", Array(carol.userID.utf8)),
            ("Bob's encoded address", bob.encoded), ("the conversation id", Array(conversation.utf8)),
            ("the message id", Array(messageID.utf8)), ("the plaintext", plaintext),
            ("Bob's identity key", bobKey.rawRepresentation), ("Carol's identity key", carolKey.rawRepresentation),
            ("the identity seed", Array(identity.serialized()[6 ..< 38])),
            ("the storage key", fixtureStorageKeyBytes),
        ]
        // While open (the values are in the WAL), then after closing (checkpointed into the file).
        for stage in ["open", "closed"] {
            if stage == "closed" { try store.close() }
            let bytes = fileBytes(path)
            XCTAssertGreaterThan(bytes.count, 4096)
            for (name, secret) in secrets {
                XCTAssertFalse(bytes.contains(subsequence: secret), "\(name) is in the file (\(stage))")
            }
        }
    }
}
