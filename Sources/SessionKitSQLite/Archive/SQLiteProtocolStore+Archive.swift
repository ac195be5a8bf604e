import Foundation
import GRDB
import SignalPrimitives

/// The encrypted message archive: the app's local cache of messages, by conversation.
///
/// A row is `(conversation_hash, message_hash, timestamp, sealed)`: the conversation id and
/// the message id are keyed hashes (the message id is also sealed in the value, so pages return
/// it); the plaintext is sealed. The timestamp is stored in clear, so that pages are one indexed
/// range query. What the file shows without the key: how many messages each (unnamed)
/// conversation holds, their timestamps and their sizes (a value is its plaintext plus the
/// message id, 2 bytes of length, and 40 bytes of nonce and tag). Pad plaintexts if sizes
/// matter. The conversation id is also kept sealed for its hash in `known_ids` (`SchemaKnownIDs`,
/// for account exports), written with the conversation's first message and deleted with its last.
extension SQLiteProtocolStore {
    /// Stores `plaintext` as message `messageID` of conversation `conversationID` at
    /// `timestamp` (any app clock; milliseconds since 1970 is typical). Appending a message id
    /// already in the conversation replaces it (plaintext and timestamp).
    ///
    /// The caller should wipe its copy of the plaintext (`SecureMemory.zero`).
    /// - Throws: `SQLiteStoreError.invalidArgument` for an empty conversation or message id or a
    ///   message id over 65535 UTF-8 bytes, `.database` when SQLite fails.
    public func appendArchivedMessage(
        _ plaintext: [UInt8], messageID: String, conversationID: String, timestamp: Int64
    ) async throws(SQLiteStoreError) {
        let sealed = try plaintext.withBytes { (p: UnsafeRawBufferPointer) throws(SQLiteStoreError) in
            try sealArchivedMessage(p, messageID: messageID, conversationID: conversationID, timestamp: timestamp)
        }
        try await storeArchived(sealed)
    }

    /// `appendArchivedMessage(_:messageID:conversationID:timestamp:)` for a plaintext held in
    /// wiping storage.
    /// - Throws: as `appendArchivedMessage(_:messageID:conversationID:timestamp:)`.
    public func appendArchivedMessage(
        _ plaintext: SecureBytes, messageID: String, conversationID: String, timestamp: Int64
    ) async throws(SQLiteStoreError) {
        let sealed = try plaintext.withUnsafeBytes { (p: UnsafeRawBufferPointer) throws(SQLiteStoreError) in
            try sealArchivedMessage(p, messageID: messageID, conversationID: conversationID, timestamp: timestamp)
        }
        try await storeArchived(sealed)
    }

    /// One page of conversation `conversationID`, newest first: at most `limit` rows older than
    /// `cursor` (from the newest message when `nil`). Continue with `nextCursor` until it is
    /// `nil`. Rows whose value does not open are skipped and counted in `damagedCount` (so a
    /// page can hold fewer than `limit` messages and still have a next page).
    /// - Throws: `SQLiteStoreError.invalidArgument` for a `limit` below 1 or an empty
    ///   conversation id, `.database` when SQLite fails.
    public func archivedMessages(
        inConversation conversationID: String, limit: Int, before cursor: ArchiveCursor? = nil
    ) async throws(SQLiteStoreError) -> ArchivePage {
        guard limit >= 1 else { throw .invalidArgument("page limit \(limit) (at least 1)") }
        let conversation = try conversationHash(conversationID)
        var sql = "SELECT message_hash, timestamp, sealed FROM archive WHERE conversation_hash = ?"
        var arguments: StatementArguments = [Data(conversation)]
        if let cursor {
            if let hash = cursor.messageHash {
                // A row-value comparison, which SQLite answers with a range of the index (an OR
                // of the two conditions made it scan every older row for each page).
                sql += " AND (timestamp, message_hash) < (?, ?)"
                arguments += [cursor.timestamp, Data(hash)]
            } else {
                sql += " AND timestamp < ?"
                arguments += [cursor.timestamp]
            }
        }
        // One row more than asked, to know whether another page follows.
        sql += " ORDER BY timestamp DESC, message_hash DESC LIMIT ?"
        arguments += [limit + 1]
        let query = sql, queryArguments = arguments
        let rows: [(DatabaseValue, DatabaseValue, DatabaseValue)]
        do {
            rows = try await readTransaction { db in
                try Row.fetchAll(db, sql: query, arguments: queryArguments).map { row in
                    (row[0] as DatabaseValue, row[1] as DatabaseValue, row[2] as DatabaseValue)
                }
            }
        } catch {
            throw Self.storeError(error)
        }
        var messages: [ArchivedMessage] = []
        var damaged = 0
        var last: ArchiveCursor?
        for (hashValue, timeValue, sealedValue) in rows.prefix(limit) {
            guard case let .blob(hashData) = hashValue.storage, case let .int64(timestamp) = timeValue.storage else {
                damaged += 1
                continue
            }
            let messageHash = [UInt8](hashData)
            let position = ArchiveCursor(timestamp: timestamp, messageHash: messageHash)
            last = position
            let rowKey = ArchiveValueCoding.rowKey(conversationHash: conversation, messageHash: messageHash, timestamp: timestamp)
            do {
                let opened = try sealer.open(try Self.blob(sealedValue, table: .archive), table: .archive, rowKey: rowKey)
                let (messageID, plaintext) = try ArchiveValueCoding.decode(opened)
                // The id sealed in the value must be the one the row is filed under.
                guard sealer.rowKey(Self.messageKeyInput(conversation: conversation, messageID: messageID), in: .archiveMessage) == messageHash else {
                    damaged += 1
                    continue
                }
                messages.append(ArchivedMessage(messageID: messageID, timestamp: timestamp, plaintext: plaintext, cursor: position))
            } catch {
                damaged += 1
            }
        }
        let next = rows.count > limit ? last : nil
        return ArchivePage(messages: messages, nextCursor: next, damagedCount: damaged)
    }

    /// Deletes message `messageID` of conversation `conversationID`.
    /// - Returns: whether it was there.
    /// - Throws: `SQLiteStoreError.invalidArgument` for an empty id, `.database` when SQLite fails.
    @discardableResult
    public func deleteArchivedMessage(_ messageID: String, inConversation conversationID: String) async throws(SQLiteStoreError) -> Bool {
        let conversation = try conversationHash(conversationID)
        let message = try messageHash(messageID, conversation: conversation)
        do {
            return try await writeTransaction { db in
                try db.execute(
                    sql: "DELETE FROM archive WHERE conversation_hash = ? AND message_hash = ?",
                    arguments: [Data(conversation), Data(message)])
                let deleted = db.changesCount > 0
                if deleted { try KnownIDs.forgetConversationIfEmpty(hash: conversation, db: db) }
                return deleted
            }
        } catch {
            throw Self.storeError(error)
        }
    }

    /// Deletes every message of conversation `conversationID`.
    /// - Returns: how many were deleted.
    /// - Throws: `SQLiteStoreError.invalidArgument` for an empty id, `.database` when SQLite fails.
    @discardableResult
    public func deleteArchivedConversation(_ conversationID: String) async throws(SQLiteStoreError) -> Int {
        let conversation = try conversationHash(conversationID)
        do {
            return try await writeTransaction { db in
                try db.execute(sql: "DELETE FROM archive WHERE conversation_hash = ?", arguments: [Data(conversation)])
                let deleted = db.changesCount
                try KnownIDs.forget(hash: conversation, db: db)
                return deleted
            }
        } catch {
            throw Self.storeError(error)
        }
    }

    // MARK: Support

    /// A sealed archive row ready to insert.
    struct SealedArchiveRow: Sendable {
        /// The conversation id (UTF-8), recorded in `known_ids` with the row.
        let conversationID: [UInt8]
        let conversationHash: [UInt8]
        let messageHash: [UInt8]
        let timestamp: Int64
        let sealed: [UInt8]
    }

    func sealArchivedMessage(
        _ plaintext: UnsafeRawBufferPointer, messageID: String, conversationID: String, timestamp: Int64
    ) throws(SQLiteStoreError) -> SealedArchiveRow {
        let conversation = try conversationHash(conversationID)
        let message = try messageHash(messageID, conversation: conversation)
        var value = ArchiveValueCoding.encode(messageID: Array(messageID.utf8), plaintext: plaintext)
        defer { SecureMemory.zero(&value) }
        let rowKey = ArchiveValueCoding.rowKey(conversationHash: conversation, messageHash: message, timestamp: timestamp)
        let sealed = try sealer.seal(value, table: .archive, rowKey: rowKey)
        return SealedArchiveRow(
            conversationID: Array(conversationID.utf8), conversationHash: conversation, messageHash: message, timestamp: timestamp,
            sealed: sealed)
    }

    private func storeArchived(_ row: SealedArchiveRow) async throws(SQLiteStoreError) {
        do {
            try await writeTransaction { [sealer] db in
                _ = try Self.insertArchived(row, replacing: true, db: db, sealer: sealer)
            }
        } catch {
            throw Self.storeError(error)
        }
    }

    /// Inserts `row` (replacing a row of the same message, or else leaving it) and records its
    /// conversation id in `known_ids`, inside the caller's transaction.
    /// - Returns: whether the row was written.
    static func insertArchived(_ row: SealedArchiveRow, replacing: Bool, db: Database, sealer: ValueSealer) throws -> Bool {
        try db.execute(
            sql: "INSERT OR \(replacing ? "REPLACE" : "IGNORE") INTO archive (conversation_hash, message_hash, timestamp, sealed) VALUES (?, ?, ?, ?)",
            arguments: [Data(row.conversationHash), Data(row.messageHash), row.timestamp, Data(row.sealed)])
        guard db.changesCount > 0 else { return false }
        try KnownIDs.record(row.conversationID, hash: row.conversationHash, db: db, sealer: sealer)
        return true
    }

    func conversationHash(_ conversationID: String) throws(SQLiteStoreError) -> [UInt8] {
        let bytes = Array(conversationID.utf8)
        guard !bytes.isEmpty else { throw .invalidArgument("empty conversation id") }
        return sealer.rowKey(bytes, in: .archiveConversation)
    }

    func messageHash(_ messageID: String, conversation: [UInt8]) throws(SQLiteStoreError) -> [UInt8] {
        let bytes = Array(messageID.utf8)
        guard !bytes.isEmpty else { throw .invalidArgument("empty message id") }
        guard bytes.count <= ArchiveValueCoding.maximumMessageIDByteCount else {
            throw .invalidArgument("message id of \(bytes.count) UTF-8 bytes (at most \(ArchiveValueCoding.maximumMessageIDByteCount))")
        }
        return sealer.rowKey(Self.messageKeyInput(conversation: conversation, messageID: messageID), in: .archiveMessage)
    }

    /// What a message id is hashed as: its conversation's hash, then the id, so that equal
    /// message ids in two conversations hash differently.
    private static func messageKeyInput(conversation: [UInt8], messageID: String) -> [UInt8] {
        conversation + Array(messageID.utf8)
    }
}
