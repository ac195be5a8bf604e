import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// The send log (SPEC §9) in `send_log` (`SchemaSendLog`): one row per message sent, by the
/// keyed hash of its chain, its value (`SendLogValueCoding`) sealed for the row's hash, id and
/// expiry. A `SessionManager` whose store and send log are this store writes each entry in the
/// transaction that stores the message's advanced chain (`appliesSendLogInCommits`).
extension SQLiteProtocolStore: SendLogStore {
    /// `true`: `commit(_:)` applies `StoreCommit.sendLog` in its transaction.
    public var appliesSendLogInCommits: Bool { true }

    /// The entries of `chain` that expire after `now`, oldest first. A row whose value does not
    /// open or decode (moved from another row, changed, its expiry pushed back) is left out, so
    /// that one damaged entry does not stop a recovery; it goes when it expires or its chain is
    /// removed. The table is scanned (no index on the chain: see `SchemaSendLog`).
    /// - Throws: `SessionError.storage` when the file fails.
    public func loadSendLog(for chain: SendLogChain, now: Timestamp) async throws(SessionError) -> [SendLogEntry] {
        let chainHash = sealer.rowKey(chain.identifyingBytes, in: .sendLogChain)
        do {
            return try await readTransaction { [sealer] db -> [SendLogEntry] in
                try Row.fetchAll(
                    db, sql: "SELECT id, expires_at, sealed FROM send_log WHERE chain_hash = ? AND expires_at > ? ORDER BY id",
                    arguments: [Data(chainHash), now.secondsSince1970]
                ).compactMap { row -> SendLogEntry? in
                    let id: Int64 = row["id"]
                    let expiresAt: Int64 = row["expires_at"]
                    guard let sealed = try? Self.blob(row["sealed"], table: .sendLog),
                          let opened = try? sealer.open(
                              sealed, table: .sendLog, rowKey: SendLogValueCoding.rowKey(chainHash: chainHash, id: id, expiresAt: expiresAt))
                    else { return nil }
                    var value = opened.bytes
                    defer { SecureMemory.zero(&value) }
                    guard let (position, plaintext) = try? SendLogValueCoding.decode(value) else { return nil }
                    return SendLogEntry(
                        id: UInt64(id), chain: chain, position: position, expiresAt: Timestamp(secondsSince1970: expiresAt), plaintext: plaintext)
                }
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Applies `changes` in one transaction.
    /// - Throws: `SessionError.storage` when the file fails; nothing changed then.
    public func applySendLog(_ changes: SendLogChanges) async throws(SessionError) {
        do {
            try await writeTransaction { [sealer] db in try Self.writeSendLog(changes, db: db, sealer: sealer) }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// How many entries the send log holds (expired ones included until they are removed).
    /// - Throws: `SQLiteStoreError.database` when SQLite fails.
    public func sendLogEntryCount() async throws(SQLiteStoreError) -> Int {
        do {
            return try await readTransaction { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM send_log") ?? 0 }
        } catch {
            throw Self.storeError(error)
        }
    }

    // MARK: Writing (inside a transaction)

    /// How many of the oldest entries each write looks at for expired ones: a write adds at
    /// most a few entries, so the expired ones are removed faster than they accumulate, and a
    /// write never reads more than the first page or two of the table for it.
    static let expiryBatch = 64

    /// Writes `changes` (expired and removed first, then the added entries, then the bound).
    static func writeSendLog(_ changes: SendLogChanges, db: Database, sealer: ValueSealer) throws {
        if let expiry = changes.expiringAt {
            try db.cachedStatement(sql: """
                DELETE FROM send_log WHERE id IN (SELECT id FROM send_log ORDER BY id LIMIT ?) AND expires_at <= ?
                """).execute(arguments: [expiryBatch, expiry.secondsSince1970])
        }
        for chain in changes.removedChains {
            let chainHash = sealer.rowKey(chain.identifyingBytes, in: .sendLogChain)
            try db.cachedStatement(sql: "DELETE FROM send_log WHERE chain_hash = ?").execute(arguments: [Data(chainHash)])
        }
        var lastID: Int64?
        for entry in changes.added {
            let chainHash = sealer.rowKey(entry.chain.identifyingBytes, in: .sendLogChain)
            let expiresAt = entry.expiresAt.secondsSince1970
            // The next id (the largest rowid is one step down the table's right edge).
            let id = (try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM send_log")) ?? 0) + 1
            var value = SendLogValueCoding.encode(position: entry.position, plaintext: entry.plaintext)
            defer { SecureMemory.zero(&value) }
            let sealed = try sealer.seal(
                value, table: .sendLog, rowKey: SendLogValueCoding.rowKey(chainHash: chainHash, id: id, expiresAt: expiresAt))
            try db.cachedStatement(sql: "INSERT INTO send_log (id, chain_hash, expires_at, sealed) VALUES (?, ?, ?, ?)")
                .execute(arguments: [id, Data(chainHash), expiresAt, Data(sealed)])
            lastID = id
        }
        // Ids increase with every entry logged: only the newest `maximum` ids can stay.
        if let maximum = changes.maximumEntries, let lastID, lastID > Int64(maximum) {
            try db.cachedStatement(sql: "DELETE FROM send_log WHERE id <= ?").execute(arguments: [lastID - Int64(maximum)])
        }
    }
}

/// The sealed value of a `send_log` row: `u32(position) || plaintext`, sealed for
/// `chain_hash || i64(id) || i64(expires_at)` (big-endian).
enum SendLogValueCoding {
    /// The row key a value is sealed for.
    static func rowKey(chainHash: [UInt8], id: Int64, expiresAt: Int64) -> [UInt8] {
        var key = chainHash
        key.reserveCapacity(chainHash.count + 16)
        key.appendBigEndian(id)
        key.appendBigEndian(expiresAt)
        return key
    }

    /// The value of an entry (wipe it after sealing).
    static func encode(position: UInt32, plaintext: [UInt8]) -> [UInt8] {
        var value: [UInt8] = []
        value.reserveCapacity(4 + plaintext.count)
        value.appendBigEndian(position)
        value.append(contentsOf: plaintext)
        return value
    }

    /// Decodes an opened value.
    /// - Throws: `SQLiteStoreError.invalidValue(table:)` when it is shorter than its position.
    static func decode(_ value: [UInt8]) throws(SQLiteStoreError) -> (UInt32, [UInt8]) {
        guard value.count >= 4 else { throw .invalidValue(table: SealedTable.sendLog.name) }
        let position = value.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return (position, Array(value.dropFirst(4)))
    }
}
