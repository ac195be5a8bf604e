import Foundation
import GRDB
@testable import SessionKitSQLite
import SignalPrimitives
import XCTest

/// The encrypted message archive: appending, paging newest first, deleting.
final class MessageArchiveTests: XCTestCase {
    private func text(_ message: ArchivedMessage) -> String { String(decoding: message.plaintext.bytes, as: UTF8.self) }

    /// Every page of `conversation`, `limit` at a time, following the cursors.
    private func allPages(_ store: SQLiteProtocolStore, _ conversation: String, limit: Int) async throws -> [[ArchivedMessage]] {
        var pages: [[ArchivedMessage]] = []
        var cursor: ArchiveCursor?
        repeat {
            let page = try await store.archivedMessages(inConversation: conversation, limit: limit, before: cursor)
            XCTAssertEqual(page.damagedCount, 0)
            pages.append(page.messages)
            cursor = page.nextCursor
            XCTAssertLessThanOrEqual(pages.count, 100, "paging must end")
        } while cursor != nil && pages.count <= 100
        return pages
    }

    func testPagesRunNewestFirstWithTiesInAFixedOrderAndEveryMessageOnce() async throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        // 25 messages over 10 timestamps (ties at every timestamp), appended out of order.
        let messages = (0 ..< 25).map { ("msg-\($0)", Int64(100 + ($0 * 7) % 10)) }
        for (id, timestamp) in messages.shuffled() {
            try await store.appendArchivedMessage(Array("text of \(id)".utf8), messageID: id, conversationID: "conv", timestamp: timestamp)
        }
        try await store.appendArchivedMessage(Array("elsewhere".utf8), messageID: "msg-0", conversationID: "other", timestamp: 500)

        let whole = try await store.archivedMessages(inConversation: "conv", limit: 100)
        XCTAssertNil(whole.nextCursor)
        XCTAssertEqual(whole.messages.count, 25)
        XCTAssertEqual(whole.messages.map(\.timestamp), messages.map(\.1).sorted(by: >))
        for message in whole.messages { XCTAssertEqual(text(message), "text of \(message.messageID)") }

        for limit in [1, 2, 3, 7, 24, 25] {
            let pages = try await allPages(store, "conv", limit: limit)
            XCTAssertEqual(pages.flatMap { $0 }.map(\.messageID), whole.messages.map(\.messageID), "limit \(limit)")
            XCTAssertTrue(pages.dropLast().allSatisfy { $0.count == limit })
            XCTAssertEqual(pages.count, (25 + limit - 1) / limit, "no empty last page (limit \(limit))")
        }
    }

    func testACursorBeforeATimestampStartsBelowIt() async throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        for t in Int64(1) ... 5 {
            try await store.appendArchivedMessage(Array("\(t)".utf8), messageID: "m\(t)", conversationID: "c", timestamp: t * 10)
        }
        let page = try await store.archivedMessages(inConversation: "c", limit: 10, before: ArchiveCursor(before: 30))
        XCTAssertEqual(page.messages.map(\.messageID), ["m2", "m1"])
        let fromMessage = try await store.archivedMessages(inConversation: "c", limit: 1, before: page.messages[0].cursor)
        XCTAssertEqual(fromMessage.messages.map(\.messageID), ["m1"])
        XCTAssertNil(fromMessage.nextCursor)
    }

    func testAppendingAnIdAgainReplacesIt() async throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        try await store.appendArchivedMessage(Array("draft".utf8), messageID: "m", conversationID: "c", timestamp: 1)
        try await store.appendArchivedMessage(SecureBytes(copying: Array("final".utf8)), messageID: "m", conversationID: "c", timestamp: 2)
        let page = try await store.archivedMessages(inConversation: "c", limit: 10)
        XCTAssertEqual(page.messages.map(text), ["final"])
        XCTAssertEqual(page.messages.map(\.timestamp), [2])
    }

    func testDeletingAMessageAndAConversation() async throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        for id in ["a", "b", "c"] {
            try await store.appendArchivedMessage(Array(id.utf8), messageID: id, conversationID: "one", timestamp: 1)
        }
        try await store.appendArchivedMessage(Array("x".utf8), messageID: "a", conversationID: "two", timestamp: 1)
        let deleted = try await store.deleteArchivedMessage("b", inConversation: "one")
        XCTAssertTrue(deleted)
        let again = try await store.deleteArchivedMessage("b", inConversation: "one")
        XCTAssertFalse(again)
        let remaining = try await store.archivedMessages(inConversation: "one", limit: 10)
        XCTAssertEqual(Set(remaining.messages.map(\.messageID)), ["a", "c"])

        let count = try await store.deleteArchivedConversation("one")
        XCTAssertEqual(count, 2)
        let empty = try await store.archivedMessages(inConversation: "one", limit: 10)
        XCTAssertTrue(empty.messages.isEmpty)
        XCTAssertNil(empty.nextCursor)
        let other = try await store.archivedMessages(inConversation: "two", limit: 10)
        XCTAssertEqual(other.messages.map(text), ["x"], "another conversation with the same message id is untouched")
    }

    func testDamagedOrMovedRowsAreSkippedAndCountedNeverHidingTheOthers() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        for t in Int64(1) ... 4 {
            try await store.appendArchivedMessage(Array("\(t)".utf8), messageID: "m\(t)", conversationID: "c", timestamp: t)
        }
        try withRawDatabase(path) { db in
            // m3: a flipped ciphertext byte. m2: its clear timestamp moved (bound in the value).
            try db.execute(sql: "UPDATE archive SET sealed = substr(sealed, 1, 30) || x'00' || substr(sealed, 32) WHERE timestamp = 3")
            try db.execute(sql: "UPDATE archive SET timestamp = 20 WHERE timestamp = 2")
        }
        let page = try await store.archivedMessages(inConversation: "c", limit: 10)
        XCTAssertEqual(page.messages.map(\.messageID), ["m4", "m1"])
        XCTAssertEqual(page.damagedCount, 2)
    }

    func testAValueMovedToAnotherConversationDoesNotOpen() async throws {
        let path = try temporaryStorePath()
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        try await store.appendArchivedMessage(Array("secret".utf8), messageID: "m", conversationID: "alice", timestamp: 1)
        try await store.appendArchivedMessage(Array("other".utf8), messageID: "n", conversationID: "mallory", timestamp: 1)
        let mallory = store.sealer.rowKey(Array("mallory".utf8), in: .archiveConversation)
        try withRawDatabase(path) { db in
            try db.execute(sql: "UPDATE archive SET conversation_hash = ? WHERE conversation_hash != ?", arguments: [Data(mallory), Data(mallory)])
        }
        let page = try await store.archivedMessages(inConversation: "mallory", limit: 10)
        XCTAssertEqual(page.messages.map(\.messageID), ["n"])
        XCTAssertEqual(page.damagedCount, 1)
    }

    func testInvalidArgumentsAreTypedErrors() async throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        await assertThrows(SQLiteStoreError.invalidArgument("page limit 0 (at least 1)")) {
            _ = try await store.archivedMessages(inConversation: "c", limit: 0)
        }
        await assertThrows(SQLiteStoreError.invalidArgument("empty conversation id")) {
            try await store.appendArchivedMessage([1], messageID: "m", conversationID: "", timestamp: 1)
        }
        await assertThrows(SQLiteStoreError.invalidArgument("empty message id")) {
            try await store.appendArchivedMessage([1], messageID: "", conversationID: "c", timestamp: 1)
        }
    }

    func testAnArchivedMessageDescribesNeitherItsIdNorItsText() async throws {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        try await store.appendArchivedMessage(Array("top secret".utf8), messageID: "id-77", conversationID: "c", timestamp: 5)
        let page = try await store.archivedMessages(inConversation: "c", limit: 1)
        let message = try XCTUnwrap(page.messages.first)
        XCTAssertEqual("\(message)", "ArchivedMessage(at 5, 10 bytes, redacted)")
        XCTAssertFalse(String(reflecting: message).contains("secret"))
    }
}
