import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import Verification
import XCTest

/// Account exports without lists (issue 20): the sealed `known_ids` table (schema 10) names every
/// trust record and archived conversation the store writes, so
/// `AccountExportContents.everything(userID:)` exports them all; rows of older schemas stay
/// unlisted until the app names them.
final class AccountExportKnownIDTests: XCTestCase {
    /// The messages of the source store: (conversation, id, timestamp, plaintext).
    private let messages: [(String, String, Int64, [UInt8])] = [
        ("bob", "m1", 1_000, Array("hello Bob".utf8)),
        ("bob", "m2", 2_000, []),
        ("carol 🐦", "m1", -5, Array("same id, other conversation".utf8)),
        ("family", "f1", 3_000, Array(0 ... 255)),
        ("family", "f2", 3_000, Array("second".utf8)),
    ]
    private let users = ["bob", "carol 🐦", "dave", "eve"]

    /// A store with four trust records (trusted on two devices, verified, changed and awaiting
    /// acceptance, accepted with a superseded key), the messages above, and a contact and two
    /// conversations that were removed again.
    private func makeSource(at path: String) async throws -> SQLiteProtocolStore {
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        _ = try await store.observeIdentity(identityKey(0xb0), for: address("bob", 1))
        _ = try await store.observeIdentity(identityKey(0xb0), for: address("bob", 3))
        try await store.markVerified(identityKey(0xc0), forUser: "carol 🐦")
        _ = try await store.observeIdentity(identityKey(0xd0), for: address("dave", 7))
        _ = try await store.observeIdentity(identityKey(0xd1), for: address("dave", 7))
        _ = try await store.observeIdentity(identityKey(0xe0), for: address("eve", 1))
        try await store.acceptIdentityChange(identityKey(0xe1), forUser: "eve")
        _ = try await store.observeIdentity(identityKey(0xf0), for: address("frank", 1))
        try await store.removeRecord(forUser: "frank")
        for (conversation, id, timestamp, plaintext) in messages {
            try await store.appendArchivedMessage(plaintext, messageID: id, conversationID: conversation, timestamp: timestamp)
        }
        try await store.appendArchivedMessage(Array("gone".utf8), messageID: "g1", conversationID: "gone", timestamp: 1)
        try await store.appendArchivedMessage(Array("gone".utf8), messageID: "g2", conversationID: "gone", timestamp: 2)
        let goneCount = try await store.deleteArchivedConversation("gone")
        XCTAssertEqual(goneCount, 2)
        try await store.appendArchivedMessage(Array("last".utf8), messageID: "l1", conversationID: "emptied", timestamp: 1)
        let lastDeleted = try await store.deleteArchivedMessage("l1", inConversation: "emptied")
        XCTAssertTrue(lastDeleted)
        return store
    }

    /// Every message of `conversation`, newest first, as (id, timestamp, plaintext).
    private func allMessages(_ store: SQLiteProtocolStore, _ conversation: String) async throws -> [[String]] {
        var out: [[String]] = []
        var cursor: ArchiveCursor?
        repeat {
            let page = try await store.archivedMessages(inConversation: conversation, limit: 2, before: cursor)
            XCTAssertEqual(page.damagedCount, 0)
            out += page.messages.map { [$0.messageID, "\($0.timestamp)", $0.plaintext.bytes.map { String($0) }.joined(separator: ",")] }
            cursor = page.nextCursor
        } while cursor != nil
        return out
    }

    /// The records of `users` (and of the removed frank) and the messages of every conversation
    /// (and of the removed ones), as comparable values.
    private func contents(of store: SQLiteProtocolStore) async throws -> [String] {
        var out: [String] = []
        for user in users + ["frank"] { out.append("\(user): \(String(describing: try await store.record(forUser: user)))") }
        for conversation in ["bob", "carol 🐦", "family", "gone", "emptied"] {
            // Sorted by id: messages with equal timestamps page in the order of their keyed
            // hashes, which differ between files.
            let messages = try await allMessages(store, conversation).sorted { $0[0] < $1[0] }
            out.append("\(conversation): \(messages)")
        }
        return out
    }

    private func knownIDRowCount(_ path: String) throws -> Int? {
        try withRawDatabase(path) { try Int.fetchOne($0, sql: "SELECT count(*) FROM known_ids") }
    }

    func testAnExportWithoutListsHoldsEverythingAndItsRestoreExportsEverythingAgain() async throws {
        let folder = try temporaryFolder()
        let source = try await makeSource(at: folder.appendingPathComponent("source.sqlite").path)
        let expected = try await contents(of: source)
        XCTAssertEqual(expected.count, 10)
        XCTAssertTrue(expected[1].contains("verified"), expected[1])
        XCTAssertTrue(expected[4].hasSuffix("nil"), "frank was removed: \(expected[4])")

        let code = try AccountExport.newRecoveryCode()
        let firstExport = folder.appendingPathComponent("first.age").path
        let report = try await source.exportAccount(
            .everything(userID: "alice"), to: [AccountExportDestination(path: firstExport, protection: .recoveryCode(code.recipient))])
        XCTAssertEqual(report.trustRecordCount, 4, "bob, carol, dave, eve; not frank, whose record was removed")
        XCTAssertEqual(report.messageCount, messages.count)
        XCTAssertEqual(report.contactsWithoutRecord, [])
        XCTAssertEqual(report.damagedMessageCount, 0)
        XCTAssertEqual(report.unlistedTrustRecordCount, 0)
        XCTAssertEqual(report.unlistedConversationCount, 0)
        XCTAssertTrue(report.isComplete)

        let firstPath = folder.appendingPathComponent("first.sqlite").path
        let firstKey = StorageKey.generate()
        let restore = try await SQLiteProtocolStore.restoreAccount(
            from: firstExport, identities: [code], to: firstPath, storageKey: firstKey, expectedIdentity: source.identity.publicKey)
        XCTAssertEqual(restore.importedTrustRecordCount, 4)
        XCTAssertEqual(restore.importedMessageCount, messages.count)
        XCTAssertEqual(restore.skipped, [])
        XCTAssertEqual(try knownIDRowCount(firstPath), 4 + 3, "restore recorded the ids of 4 users and 3 conversations")
        let restored = try SQLiteProtocolStore(path: firstPath, storageKey: firstKey)
        XCTAssertEqual(restored.identity.publicKey, source.identity.publicKey)
        let restoredContents = try await contents(of: restored)
        XCTAssertEqual(restoredContents, expected)
        let carolStatus = try await restored.status(forUser: "carol 🐦")
        XCTAssertEqual(carolStatus, .verified)

        // The restored store names everything again without lists.
        let secondExport = folder.appendingPathComponent("second.age").path
        let again = try await restored.exportAccount(
            .everything(userID: "alice"), to: [AccountExportDestination(path: secondExport, protection: .recoveryCode(code.recipient))])
        XCTAssertEqual(again.trustRecordCount, 4)
        XCTAssertEqual(again.messageCount, messages.count)
        XCTAssertTrue(again.isComplete)
        let secondPath = folder.appendingPathComponent("second.sqlite").path
        _ = try await SQLiteProtocolStore.restoreAccount(
            from: secondExport, identities: [code], to: secondPath, storageKey: firstKey, expectedIdentity: source.identity.publicKey)
        let twice = try SQLiteProtocolStore(path: secondPath, storageKey: firstKey)
        let twiceContents = try await contents(of: twice)
        XCTAssertEqual(twiceContents, expected)
    }

    func testTheTableForgetsRemovedRecordsAndConversationsAndKeepsOneRowPerID() async throws {
        let path = try temporaryStorePath()
        let store = try await makeSource(at: path)
        // bob, carol, dave, eve; bob, carol 🐦, family (frank, gone and emptied were removed).
        XCTAssertEqual(try knownIDRowCount(path), 7)
        try await store.removeRecord(forUser: "dave")
        let firstDeleted = try await store.deleteArchivedMessage("m1", inConversation: "bob")
        XCTAssertTrue(firstDeleted)
        XCTAssertEqual(try knownIDRowCount(path), 6, "dave is gone; bob's conversation still holds m2")
        let secondDeleted = try await store.deleteArchivedMessage("m2", inConversation: "bob")
        XCTAssertTrue(secondDeleted)
        XCTAssertEqual(try knownIDRowCount(path), 5, "bob's conversation is empty")
        try await store.appendArchivedMessage(Array("again".utf8), messageID: "m3", conversationID: "family", timestamp: 9)
        _ = try await store.observeIdentity(identityKey(0xb0), for: address("bob", 4))
        XCTAssertEqual(try knownIDRowCount(path), 5, "writing again adds no row")
        let report = try await store.exportAccount(
            .everything(userID: "alice"),
            to: [AccountExportDestination(path: try temporaryFolder().appendingPathComponent("a.age").path,
                                          protection: .recoveryCode(try AccountExport.newRecoveryCode().recipient))])
        XCTAssertEqual(report.trustRecordCount, 3)
        XCTAssertEqual(report.messageCount, 4, "carol's m1 and family's three")
        XCTAssertTrue(report.isComplete)
    }

    func testEverythingAddsTheListsAndTheListsAloneStayExact() async throws {
        let store = try await makeSource(at: try temporaryStorePath())
        let folder = try temporaryFolder()
        let destination = [AccountExportDestination(
            path: folder.appendingPathComponent("a.age").path, protection: .recoveryCode(try AccountExport.newRecoveryCode().recipient))]

        let both = try await store.exportAccount(
            .everything(userID: "alice", contacts: ["nobody", "bob"], conversations: ["empty", "family"]), to: destination)
        XCTAssertEqual(both.trustRecordCount, 4, "bob once")
        XCTAssertEqual(both.messageCount, messages.count, "family once")
        XCTAssertEqual(both.contactsWithoutRecord, ["nobody"])
        XCTAssertTrue(both.isComplete)

        let listed = try await store.exportAccount(
            AccountExportContents(userID: "alice", contacts: ["bob"], conversations: ["family"]), to: destination)
        XCTAssertEqual(listed.trustRecordCount, 1)
        XCTAssertEqual(listed.messageCount, 2)
        XCTAssertEqual(listed.unlistedTrustRecordCount, 3, "carol, dave, eve: known, but not listed")
        XCTAssertEqual(listed.unlistedConversationCount, 2, "bob, carol 🐦")
        XCTAssertFalse(listed.isComplete)
    }

    func testTheSchema1FixtureReportsItsOldRowsAsUnlistedUntilTheyAreNamedOrWritten() async throws {
        let path = try temporaryStorePath()
        try FileManager.default.copyItem(at: fixturesFolder.appendingPathComponent("schema1.sqlite"), to: URL(fileURLWithPath: path))
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let version = try await store.readTransaction { try Int.fetchOne($0, sql: "PRAGMA user_version") }
        XCTAssertEqual(version, Schema.currentVersion)
        let knownRows = try await store.readTransaction { try Int.fetchOne($0, sql: "SELECT count(*) FROM known_ids") }
        XCTAssertEqual(knownRows, 0)
        let folder = try temporaryFolder()
        let destination = [AccountExportDestination(
            path: folder.appendingPathComponent("a.age").path, protection: .recoveryCode(try AccountExport.newRecoveryCode().recipient))]

        let unnamed = try await store.exportAccount(.everything(userID: "alice"), to: destination)
        XCTAssertEqual(unnamed.trustRecordCount, 0)
        XCTAssertEqual(unnamed.messageCount, 0)
        XCTAssertEqual(unnamed.unlistedTrustRecordCount, 2, "bob's and carol's per-device rows of schema 1")
        XCTAssertEqual(unnamed.unlistedConversationCount, 1, "fixture-conversation")
        XCTAssertFalse(unnamed.isComplete)

        let named = try await store.exportAccount(
            .everything(userID: "alice", contacts: ["fixture-bob", "fixture-carol"], conversations: ["fixture-conversation"]),
            to: destination)
        XCTAssertEqual(named.trustRecordCount, 2)
        XCTAssertEqual(named.messageCount, 3)
        XCTAssertEqual(named.unlistedTrustRecordCount, 0)
        XCTAssertEqual(named.unlistedConversationCount, 0)
        XCTAssertTrue(named.isComplete)

        // Writing a record or archiving a message records its id.
        _ = try await store.observeIdentity(
            try Ed25519.PublicKey(rawRepresentation: [UInt8](repeating: 0xb0, count: 32)), for: address("fixture-bob", 5))
        try await store.appendArchivedMessage(Array("new".utf8), messageID: "m4", conversationID: "fixture-conversation", timestamp: 3000)
        let written = try await store.exportAccount(.everything(userID: "alice"), to: destination)
        XCTAssertEqual(written.trustRecordCount, 1, "bob")
        XCTAssertEqual(written.messageCount, 4)
        XCTAssertEqual(written.unlistedTrustRecordCount, 1, "carol's row")
        XCTAssertEqual(written.unlistedConversationCount, 0)
    }

    func testTheSchema4FixtureReportsItsRecordAndConversationAsUnlisted() async throws {
        let path = try temporaryStorePath()
        try FileManager.default.copyItem(at: fixturesFolder.appendingPathComponent("schema4.sqlite"), to: URL(fileURLWithPath: path))
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let destination = [AccountExportDestination(
            path: try temporaryFolder().appendingPathComponent("a.age").path,
            protection: .recoveryCode(try AccountExport.newRecoveryCode().recipient))]
        let unnamed = try await store.exportAccount(.everything(userID: "fixture-bob"), to: destination)
        XCTAssertEqual(unnamed.trustRecordCount, 0)
        XCTAssertEqual(unnamed.unlistedTrustRecordCount, 1, "fixture-alice's record")
        XCTAssertEqual(unnamed.unlistedConversationCount, 1, "fixture-replays")
        let named = try await store.exportAccount(
            .everything(userID: "fixture-bob", contacts: ["fixture-alice"], conversations: ["fixture-replays"]), to: destination)
        XCTAssertEqual(named.trustRecordCount, 1)
        XCTAssertEqual(named.messageCount, 2)
        XCTAssertTrue(named.isComplete)
    }

    /// A file of the schema before `known_ids` (a current file with the table dropped and
    /// `user_version` set back; its other tables are exactly the earlier schema's) migrates:
    /// the step at `SchemaKnownIDs.version` creates the table, and the records written before
    /// are unlisted.
    func testAFileFromTheSchemaBeforeMigratesAndItsRowsAreUnlisted() async throws {
        let path = try temporaryStorePath()
        let store = try await makeSource(at: path)
        try store.close()
        try withRawDatabase(path) { db in
            try db.execute(sql: "DROP TABLE known_ids")
            // And what the steps after it added.
            try db.execute(sql: "ALTER TABLE send_log DROP COLUMN user_hash")
            try db.execute(sql: "ALTER TABLE send_log DROP COLUMN peer_hash")
            try db.execute(sql: "PRAGMA user_version = \(SchemaKnownIDs.version - 1)")
        }
        let reopened = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let version = try await reopened.readTransaction { try Int.fetchOne($0, sql: "PRAGMA user_version") }
        XCTAssertEqual(version, Schema.currentVersion)
        let report = try await reopened.exportAccount(
            .everything(userID: "alice"),
            to: [AccountExportDestination(path: try temporaryFolder().appendingPathComponent("a.age").path,
                                          protection: .recoveryCode(try AccountExport.newRecoveryCode().recipient))])
        XCTAssertEqual(report.trustRecordCount, 0)
        XCTAssertEqual(report.unlistedTrustRecordCount, 4)
        XCTAssertEqual(report.unlistedConversationCount, 3)
    }

    func testTheIDsAreSealedAndAValueMovedToAnotherRowNamesNothing() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let user = "contact-id-9f3a61c2", conversation = "conversation-id-4d7e0b85"
        _ = try await store.observeIdentity(identityKey(0xb0), for: address(user, 1))
        try await store.appendArchivedMessage(Array("x".utf8), messageID: "m", conversationID: conversation, timestamp: 1)
        try store.close()
        let bytes = fileBytes(path)
        XCTAssertGreaterThan(bytes.count, 4096)
        XCTAssertFalse(bytes.contains(subsequence: Array(user.utf8)), "the user id is in the file")
        XCTAssertFalse(bytes.contains(subsequence: Array(conversation.utf8)), "the conversation id is in the file")
        let rows = try withRawDatabase(path) { db in try Row.fetchAll(db, sql: "SELECT id_hash, sealed FROM known_ids ORDER BY id_hash") }
        XCTAssertEqual(rows.count, 2)
        for row in rows {
            let sealed = [UInt8](row["sealed"] as Data)
            XCTAssertGreaterThanOrEqual(sealed.count, ValueSealer.overhead + min(user.utf8.count, conversation.utf8.count))
        }

        // Swap the two sealed values: neither opens under the other's row key, so nothing is named.
        try withRawDatabase(path) { db in
            let (first, second) = (rows[0]["id_hash"] as Data, rows[1]["id_hash"] as Data)
            try db.execute(sql: "UPDATE known_ids SET sealed = ? WHERE id_hash = ?", arguments: [rows[1]["sealed"] as Data, first])
            try db.execute(sql: "UPDATE known_ids SET sealed = ? WHERE id_hash = ?", arguments: [rows[0]["sealed"] as Data, second])
        }
        let reopened = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let report = try await reopened.exportAccount(
            .everything(userID: "alice"),
            to: [AccountExportDestination(path: try temporaryFolder().appendingPathComponent("a.age").path,
                                          protection: .recoveryCode(try AccountExport.newRecoveryCode().recipient))])
        XCTAssertEqual(report.trustRecordCount, 0)
        XCTAssertEqual(report.messageCount, 0)
        XCTAssertEqual(report.unlistedTrustRecordCount, 1)
        XCTAssertEqual(report.unlistedConversationCount, 1)
    }
}
