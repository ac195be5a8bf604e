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
                    db, sql: """
                        SELECT id, expires_at, peer_hash, sealed FROM send_log WHERE chain_hash = ? AND expires_at > ? ORDER BY id
                        """,
                    arguments: [Data(chainHash), now.secondsSince1970]
                ).compactMap { row -> SendLogEntry? in
                    let id: Int64 = row["id"]
                    let peerHash: Data? = row["peer_hash"]
                    let rowKey = SendLogValueCoding.rowKey(
                        chainHash: chainHash, id: id, expiresAt: row["expires_at"], peerHash: peerHash.map { [UInt8]($0) })
                    guard let sealed = try? Self.blob(row["sealed"], table: .sendLog),
                          let opened = try? sealer.open(sealed, table: .sendLog, rowKey: rowKey)
                    else { return nil }
                    var value = opened.bytes
                    defer { SecureMemory.zero(&value) }
                    guard let decoded = try? SendLogValueCoding.decode(value), decoded.expiresAt > now.secondsSince1970 else { return nil }
                    return SendLogEntry(
                        id: UInt64(id), chain: chain, position: decoded.position,
                        expiresAt: Timestamp(secondsSince1970: decoded.expiresAt), plaintext: decoded.plaintext,
                        peerIdentityKey: decoded.peerIdentityKey)
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
        for peer in changes.removedPeers {
            let userHash = Data(sealer.rowKey(Array(peer.userID.utf8), in: .sendLogUser))
            if let key = peer.identityKey {
                try db.cachedStatement(sql: "DELETE FROM send_log WHERE user_hash = ? AND peer_hash IS NOT ?").execute(arguments: [
                    userHash, Data(SendLogValueCoding.peerHash(userID: peer.userID, identityKey: key, sealer: sealer)),
                ])
            } else {
                try db.cachedStatement(sql: "DELETE FROM send_log WHERE user_hash = ?").execute(arguments: [userHash])
            }
        }
        var lastID: Int64?
        for entry in changes.added {
            let chainHash = sealer.rowKey(entry.chain.identifyingBytes, in: .sendLogChain)
            let expiresAt = SendLogValueCoding.coarseExpiry(entry.expiresAt.secondsSince1970)
            var userHash: [UInt8]?
            var peerHash: [UInt8]?
            if case let .pairwise(recipient, _) = entry.chain, let key = entry.peerIdentityKey {
                userHash = sealer.rowKey(Array(recipient.userID.utf8), in: .sendLogUser)
                peerHash = SendLogValueCoding.peerHash(userID: recipient.userID, identityKey: key, sealer: sealer)
            }
            // The next id (the largest rowid is one step down the table's right edge).
            let id = (try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM send_log")) ?? 0) + 1
            var value = SendLogValueCoding.encode(entry)
            defer { SecureMemory.zero(&value) }
            let sealed = try sealer.seal(
                value, table: .sendLog,
                rowKey: SendLogValueCoding.rowKey(chainHash: chainHash, id: id, expiresAt: expiresAt, peerHash: peerHash))
            try db.cachedStatement(sql: "INSERT INTO send_log (id, chain_hash, expires_at, user_hash, peer_hash, sealed) VALUES (?, ?, ?, ?, ?, ?)")
                .execute(arguments: [id, Data(chainHash), expiresAt, userHash.map { Data($0) }, peerHash.map { Data($0) }, Data(sealed)])
            lastID = id
        }
        // Ids increase with every entry logged: only the newest `maximum` ids can stay.
        if let maximum = changes.maximumEntries, let lastID, lastID > Int64(maximum) {
            try db.cachedStatement(sql: "DELETE FROM send_log WHERE id <= ?").execute(arguments: [lastID - Int64(maximum)])
        }
    }
}

/// The sealed value of a `send_log` row (`SchemaSendLogPeers`):
///
///     u32(position) || i64(expires_at) || u8(has_key) || [identity key (32)] || u32(length) || plaintext || zeros
///
/// padded with zeros to `paddedLength`, sealed for `chain_hash || i64(id) || i64(expires_at
/// column) || [peer_hash]` (big-endian), so a value moved to another row, an expiry pushed
/// back or a peer hash changed fails to open. The value's expiry is the exact one; the
/// column's is rounded up to the hour (`coarseExpiry`).
enum SendLogValueCoding {
    /// An opened value.
    struct Value {
        let position: UInt32
        let expiresAt: Int64
        let peerIdentityKey: Ed25519.PublicKey?
        let plaintext: [UInt8]
    }

    /// The row key a value is sealed for.
    static func rowKey(chainHash: [UInt8], id: Int64, expiresAt: Int64, peerHash: [UInt8]?) -> [UInt8] {
        var key = chainHash
        key.reserveCapacity(chainHash.count + 16 + 32)
        key.appendBigEndian(id)
        key.appendBigEndian(expiresAt)
        if let peerHash { key.append(contentsOf: peerHash) }
        return key
    }

    /// The keyed hash of a user and an identity key (`send_log.peer_hash`).
    static func peerHash(userID: String, identityKey: Ed25519.PublicKey, sealer: ValueSealer) -> [UInt8] {
        let user = Array(userID.utf8)
        return sealer.rowKey([UInt8(truncatingIfNeeded: user.count)] + user + identityKey.rawRepresentation, in: .sendLogPeer)
    }

    /// The clear expiry: `seconds` rounded up to the next full hour.
    static func coarseExpiry(_ seconds: Int64) -> Int64 {
        let hour: Int64 = 3600
        let (quotient, remainder) = seconds.quotientAndRemainder(dividingBy: hour)
        guard remainder > 0, quotient < Int64.max / hour else { return seconds }
        return (quotient + 1) * hour
    }

    /// The length a value of `length` bytes is padded to: 256 bytes at least, else the next
    /// power of two (a value reveals its size class, not its length).
    static func paddedLength(_ length: Int) -> Int {
        guard length > 256 else { return 256 }
        var padded = 256
        while padded < length { padded *= 2 }
        return padded
    }

    /// The value of an entry (wipe it after sealing).
    static func encode(_ entry: SendLogEntry) -> [UInt8] {
        let key = entry.peerIdentityKey?.rawRepresentation
        let length = 4 + 8 + 1 + (key?.count ?? 0) + 4 + entry.plaintext.count
        var value: [UInt8] = []
        value.reserveCapacity(paddedLength(length))
        value.appendBigEndian(entry.position)
        value.appendBigEndian(entry.expiresAt.secondsSince1970)
        value.append(key == nil ? 0 : 1)
        if let key { value.append(contentsOf: key) }
        value.appendBigEndian(UInt32(truncatingIfNeeded: entry.plaintext.count))
        value.append(contentsOf: entry.plaintext)
        value.append(contentsOf: repeatElement(0, count: paddedLength(length) - length))
        return value
    }

    /// Decodes an opened value.
    /// - Throws: `SQLiteStoreError.invalidValue(table:)` when it does not decode (a length past
    ///   the end, a padding byte that is not zero, a key that is not a valid encoding).
    static func decode(_ value: [UInt8]) throws(SQLiteStoreError) -> Value {
        do {
            return try value.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(ValueDecodingError) -> Value in
                var reader = ValueReader(bytes)
                let position = try reader.readUInt32()
                let expiresAt = Int64(bitPattern: try reader.readUInt64())
                var key: Ed25519.PublicKey?
                switch try reader.readByte() {
                case 0: break
                case 1:
                    guard let decoded = try? Ed25519.PublicKey(rawRepresentation: try reader.readBytes(32)) else { throw ValueDecodingError() }
                    key = decoded
                default: throw ValueDecodingError()
                }
                let length = Int(try reader.readUInt32())
                let plaintext = try reader.readBytes(length)
                guard reader.readRest().allSatisfy({ $0 == 0 }) else { throw ValueDecodingError() }
                return Value(position: position, expiresAt: expiresAt, peerIdentityKey: key, plaintext: plaintext)
            }
        } catch {
            throw .invalidValue(table: SealedTable.sendLog.name)
        }
    }
}
