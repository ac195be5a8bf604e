import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// Restore detection, inside the opening transaction: the file's own epoch (`store_epoch`,
/// `SchemaStoreEpoch`), and what the store does when it is behind the epoch kept beside the
/// storage key (`StoreRestore`).
extension SQLiteProtocolStore {
    /// The file's identity in its epoch: the keyed hash of the file salt (`StoreEpoch.fileID`).
    static func epochFileID(salt: [UInt8], sealer: ValueSealer) -> [UInt8] {
        Array(sealer.rowKey(salt, in: .storeEpochFile).prefix(StoreEpoch.fileIDByteCount))
    }

    /// The epoch sealed in the file, or `nil` when it has none (a new file, or one from before
    /// schema 7 that was just migrated).
    /// - Throws: `SQLiteStoreError.damagedValue(table: "store_epoch")` when it does not open,
    ///   `.invalidValue` when it is not 8 bytes.
    static func readFileEpoch(_ db: Database, sealer: ValueSealer) throws -> UInt64? {
        guard let value = try DatabaseValue.fetchOne(db, sql: "SELECT sealed FROM store_epoch WHERE id = 1") else { return nil }
        let opened = try sealer.open(try blob(value, table: .storeEpoch), table: .storeEpoch, rowKey: singleRowKey).bytes
        guard opened.count == 8 else { throw SQLiteStoreError.invalidValue(table: SealedTable.storeEpoch.name) }
        return opened.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// Seals `epoch` into the file.
    static func writeFileEpoch(_ epoch: UInt64, db: Database, sealer: ValueSealer) throws {
        var bytes: [UInt8] = []
        bytes.appendBigEndian(Int64(bitPattern: epoch))
        let sealed = try sealer.seal(bytes, table: .storeEpoch, rowKey: singleRowKey)
        try db.execute(sql: "INSERT OR REPLACE INTO store_epoch (id, sealed) VALUES (1, ?)", arguments: [Data(sealed)])
    }

    /// Seals `id` as the installation's registration id, replacing the stored one.
    static func writeRegistrationID(_ id: RegistrationID, db: Database, sealer: ValueSealer) throws {
        var bytes: [UInt8] = []
        bytes.appendBigEndian(id.rawValue)
        let sealed = try sealer.seal(bytes, table: .registration, rowKey: singleRowKey)
        try db.execute(sql: "INSERT OR REPLACE INTO registration (id, sealed) VALUES (1, ?)", arguments: [Data(sealed)])
    }

    /// What the store does, in the opening transaction, with a file found to be an older copy
    /// of itself (`StoreRestore` lists it): archives every current session, drops the sending
    /// chains, prepares the prekeys for rotation and draws a new registration id. Returns the
    /// counts and the new id.
    static func recoverFromOlderCopy(
        _ db: Database, sealer: ValueSealer, registrationID previous: RegistrationID
    ) throws -> (archived: Int, droppedChains: Int, registrationID: RegistrationID) {
        let archived = try archiveEveryCurrentSession(db, sealer: sealer)
        let droppedChains = try Int.fetchOne(db, sql: "SELECT count(*) FROM sending_chains") ?? 0
        // A sending chain is never retired to a generation: a new one starts at generation 1
        // and a stale copy of an old one (generation ≥ 1) finds no row (0), so it is refused.
        try db.execute(sql: "DELETE FROM sending_chains")
        if var keys = try readPreKeys(db, sealer: sealer, cache: nil) {
            keys.discardForRestoredStore()
            try writePreKeys(keys, db: db, sealer: sealer, cache: nil)
        }
        var id = RegistrationID.random()
        while id == previous { id = RegistrationID.random() }
        try writeRegistrationID(id, db: db, sealer: sealer)
        return (archived, droppedChains, id)
    }

    /// Archives the current session of every record in the file (`SessionState
    /// .archiveForRestoredStore()`), in parts as `commit` would write the record after
    /// `archiveCurrentSessionForRetryNotice()`: the session moves, marked, to the front of the
    /// previous sessions (its skipped keys stay where they are, under its state key), the oldest
    /// previous session beyond `ProtocolLimits.maxPreviousSessions` goes with its skipped keys,
    /// and the record's generation advances. Returns the number of sessions archived.
    private static func archiveEveryCurrentSession(_ db: Database, sealer: ValueSealer) throws -> Int {
        var archived = 0
        for row in try Row.fetchAll(db, sql: "SELECT id, user_hash, device_id, generation, sealed FROM sessions") {
            let recordID: Int64 = row["id"]
            let names = SessionRowNames(userHash: [UInt8](row["user_hash"] as Data), deviceID: UInt32(truncatingIfNeeded: row["device_id"] as Int64))
            let generation = try rowGeneration(row, table: .sessions)
            let opened = try sealer.open(
                try blob(row["sealed"], table: .sessions), table: .sessions, rowKey: ValueSealer.rowKey(names.rowKey, generation: generation))
            var header: SessionRecordLayout.Header
            do { header = try SessionRecordLayout.decodeCurrent(opened) } catch {
                throw SQLiteStoreError.invalidValue(table: SealedTable.sessions.name)
            }
            guard var part = header.current else { continue }
            header.current = nil
            defer { SecureMemory.zero(&part) }
            var session = try SessionState(serialized: part)
            session.archiveForRestoredStore()
            let stateKey = Self.stateKey(of: session, sealer: sealer)
            var archivedPart = session.serializedWithoutSkippedMessageKeys()
            defer { SecureMemory.zero(&archivedPart) }
            var order: [[UInt8]] = []
            if let value = try DatabaseValue.fetchOne(db, sql: "SELECT sealed FROM session_orders WHERE record_id = ?", arguments: [recordID]) {
                let openedOrder = try sealer.open(try blob(value, table: .sessionOrders), table: .sessionOrders, rowKey: names.rowKey)
                do { order = try SessionRecordLayout.decodePrevious(openedOrder) } catch {
                    throw SQLiteStoreError.invalidValue(table: SealedTable.sessionOrders.name)
                }
            }
            order.removeAll { $0 == stateKey }
            order.insert(stateKey, at: 0)
            while order.count > ProtocolLimits.maxPreviousSessions {
                let dropped = order.removeLast()
                try db.execute(sql: "DELETE FROM session_states WHERE record_id = ? AND state_key = ?", arguments: [recordID, Data(dropped)])
                try db.execute(sql: "DELETE FROM skipped_keys WHERE record_id = ? AND state_key = ?", arguments: [recordID, Data(dropped)])
            }
            let sealedState = try sealer.seal(archivedPart, table: .sessionStates, rowKey: names.rowKey + stateKey)
            try db.execute(sql: "INSERT OR REPLACE INTO session_states (record_id, state_key, sealed) VALUES (?, ?, ?)",
                           arguments: [recordID, Data(stateKey), Data(sealedState)])
            let sealedOrder = try sealer.seal(SessionRecordLayout.encode(previous: order), table: .sessionOrders, rowKey: names.rowKey)
            try db.execute(sql: "INSERT OR REPLACE INTO session_orders (record_id, sealed) VALUES (?, ?)",
                           arguments: [recordID, Data(sealedOrder)])
            var newHeader = SessionRecordLayout.encode(
                current: nil, requiresPostQuantum: header.requiresPostQuantum, recoveryMarks: header.recoveryMarks)
            defer { SecureMemory.zero(&newHeader) }
            let sealedHeader = try sealer.seal(newHeader, table: .sessions, rowKey: ValueSealer.rowKey(names.rowKey, generation: generation + 1))
            try db.execute(sql: "UPDATE sessions SET generation = ?, sealed = ? WHERE id = ?",
                           arguments: [column(generation + 1), Data(sealedHeader), recordID])
            archived += 1
        }
        return archived
    }
}

extension SessionRowNames {
    /// The names of a `sessions` row read from the file (its user hash and device id).
    init(userHash: [UInt8], deviceID: UInt32) {
        self.userHash = userHash
        self.deviceID = deviceID
        var rowKey = userHash
        rowKey.appendBigEndian(deviceID)
        self.rowKey = rowKey
    }
}

extension SQLiteProtocolStore {
    /// Advances the store epoch now, as an open does (the file's first, then the keeper's), and
    /// returns it. A copy of the file taken before this call is then detected when it is put
    /// back, even if the store is not opened again in between: call it when the app goes to the
    /// background (a backup usually runs while the app is suspended). Without a keeper it
    /// advances the file's epoch only. A file restored while this store has it open is not
    /// detected here (its epoch is simply moved on): detection is at open.
    /// - Throws: `SQLiteStoreError.database` when SQLite fails, `.damagedValue(table:
    ///   "store_epoch")` when the stored epoch does not open, the errors of the keeper (the
    ///   file's epoch has advanced then: the next call or open writes the keeper again).
    @discardableResult
    public func advanceEpoch() async throws(SQLiteStoreError) -> StoreEpoch {
        let fileID = epoch.fileID
        let kept = try epochKeeper?.readEpoch()
        let keptValue = kept.flatMap { $0.fileID == fileID ? $0.value : nil } ?? 0
        let next: StoreEpoch
        do {
            next = try await writeTransaction { [sealer] db -> StoreEpoch in
                let (value, overflow) = max(try Self.readFileEpoch(db, sealer: sealer) ?? 0, keptValue).addingReportingOverflow(1)
                let epoch = try StoreEpoch(fileID: fileID, value: overflow ? .max : value)
                try Self.writeFileEpoch(epoch.value, db: db, sealer: sealer)
                return epoch
            }
        } catch {
            throw Self.storeError(error)
        }
        try epochKeeper?.writeEpoch(next)
        return next
    }
}
