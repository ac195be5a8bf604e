import Foundation
import GRDB

/// The `known_ids` table (`SchemaKnownIDs`): the ids behind the keyed hashes of `trust_users`
/// and `archive`, each sealed for its hash, so that an account export can name what it exports.
enum KnownIDs {
    /// Records `id` as the id whose keyed hash is `hash`, inside the caller's transaction, unless
    /// the table has a row for `hash` already (then nothing is sealed or written).
    static func record(_ id: [UInt8], hash: [UInt8], db: Database, sealer: ValueSealer) throws {
        let lookup = try db.cachedStatement(sql: "SELECT 1 FROM known_ids WHERE id_hash = ?")
        guard try Int.fetchOne(lookup, arguments: [Data(hash)]) == nil else { return }
        let sealed = try sealer.seal(id, table: .knownIDs, rowKey: hash)
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO known_ids (id_hash, sealed) VALUES (?, ?)")
            .execute(arguments: [Data(hash), Data(sealed)])
    }

    /// Deletes the row of `hash` inside the caller's transaction.
    static func forget(hash: [UInt8], db: Database) throws {
        try db.execute(sql: "DELETE FROM known_ids WHERE id_hash = ?", arguments: [Data(hash)])
    }

    /// Deletes the row of conversation `hash` when the archive no longer holds any of its
    /// messages, inside the caller's transaction.
    static func forgetConversationIfEmpty(hash: [UInt8], db: Database) throws {
        try db.execute(
            sql: "DELETE FROM known_ids WHERE id_hash = ? AND NOT EXISTS (SELECT 1 FROM archive WHERE conversation_hash = ?)",
            arguments: [Data(hash), Data(hash)])
    }

    /// The ids the table knows of the users with a `trust_users` row, in no particular order.
    static func trustUsers(_ db: Database, sealer: ValueSealer) throws -> [String] {
        try ids(
            db, sql: "SELECT k.id_hash, k.sealed FROM known_ids k JOIN trust_users t ON t.user_hash = k.id_hash",
            domain: .trustUser, sealer: sealer)
    }

    /// The ids the table knows of the conversations with a message in the archive, in no
    /// particular order.
    static func archivedConversations(_ db: Database, sealer: ValueSealer) throws -> [String] {
        try ids(
            db,
            sql: """
                SELECT k.id_hash, k.sealed FROM known_ids k
                WHERE EXISTS (SELECT 1 FROM archive a WHERE a.conversation_hash = k.id_hash)
                """,
            domain: .archiveConversation, sealer: sealer)
    }

    /// The ids of the rows `sql` selects (`id_hash`, `sealed`) that open, are UTF-8, and hash to
    /// their row's key in `domain`; the others are left out (their records then count as
    /// unlisted).
    private static func ids(_ db: Database, sql: String, domain: RowKeyDomain, sealer: ValueSealer) throws -> [String] {
        var ids: [String] = []
        for row in try Row.fetchAll(db, sql: sql) {
            guard case let .blob(hashData) = (row[0] as DatabaseValue).storage,
                  case let .blob(sealedData) = (row[1] as DatabaseValue).storage else { continue }
            let hash = [UInt8](hashData)
            guard let opened = try? sealer.open([UInt8](sealedData), table: .knownIDs, rowKey: hash),
                  let id = String(validating: opened.bytes, as: UTF8.self),
                  !id.isEmpty, sealer.rowKey(Array(id.utf8), in: domain) == hash else { continue }
            ids.append(id)
        }
        return ids
    }
}
