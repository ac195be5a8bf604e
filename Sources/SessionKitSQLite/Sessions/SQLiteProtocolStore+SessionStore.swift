import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// Session records, kept in parts (schema 2, `SchemaVersion2`): one `sessions` row per peer
/// device holds the order of its sessions and the current session without its skipped keys;
/// each previous session is a `session_states` row and each skipped key a `skipped_keys` row.
/// A commit writes only the parts that changed, so persisting a message costs about the same
/// for a device with 40 previous sessions and thousands of skipped keys as for a fresh one.
extension SQLiteProtocolStore: SessionStore {
    /// The record for `address`, or `nil`, with its stored generation.
    /// - Throws: `SessionError.storage` when the file fails, `.damagedState(.session)` when a
    ///   part does not open or decode; `.invalidPayload` / `.unsupportedVersion` when a part
    ///   opens but its session does not load.
    public func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord? {
        let names = SessionRowNames(address, sealer: sealer)
        let cached = sessionCache.entry(for: address)
        do {
            // The usual case: the record this store last read or wrote is still the stored one.
            // (A cached record without its previous sessions does not do here.)
            let cached = cached.flatMap { $0.isPartial ? nil : $0 }
            if let cached {
                let row = try await singleStatementRead { db in try Self.sessionRow(db, names) }
                if let row, row.id == cached.recordID, row.generation == cached.generation { return cached.record }
            }
            let loaded = try await readTransaction { [sealer] db -> SessionPartsCache.Entry? in
                guard let row = try Self.sessionRow(db, names) else { return nil }
                if let cached, cached.recordID == row.id, cached.generation == row.generation { return cached }
                return try Self.readRecord(db, names, row: row, sealer: sealer, currentSessionOnly: false)
            }
            guard let loaded else {
                sessionCache.remove(address)
                return nil
            }
            sessionCache.store(loaded, for: address)
            return loaded.record
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Deletes the record for `address` with all its parts (its generation starts again at 0).
    /// - Throws: `SessionError.storage` when the file fails.
    public func deleteSession(for address: ProtocolAddress) async throws(SessionError) {
        let names = SessionRowNames(address, sealer: sealer)
        do {
            try await writeTransaction { db in
                guard let row = try Self.sessionRow(db, names) else { return }
                try db.execute(sql: "DELETE FROM skipped_keys WHERE record_id = ?", arguments: [row.id])
                try db.execute(sql: "DELETE FROM session_states WHERE record_id = ?", arguments: [row.id])
                try db.execute(sql: "DELETE FROM session_orders WHERE record_id = ?", arguments: [row.id])
                try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [row.id])
                try Self.retire(names.rowKey, generation: row.generation, db: db)
            }
            sessionCache.remove(address)
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// The device ids of `userID` with a stored record, ascending.
    /// - Throws: `SessionError.storage` when the file fails.
    public func deviceIDs(ofUser userID: String) async throws(SessionError) -> [UInt32] {
        let userHash = sealer.rowKey(Array(userID.utf8), in: .sessionUser)
        do {
            return try await readTransaction { db in
                try Int64.fetchAll(db, sql: "SELECT device_id FROM sessions WHERE user_hash = ? ORDER BY device_id",
                                   arguments: [Data(userHash)])
                    .map { UInt32(truncatingIfNeeded: $0) }
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    // MARK: Reading

    /// A `sessions` row's id and generation.
    struct SessionRow {
        let id: Int64
        let generation: UInt64
    }

    /// The `sessions` row of `names`, if any, inside the caller's transaction.
    static func sessionRow(_ db: Database, _ names: SessionRowNames) throws -> SessionRow? {
        let statement = try db.cachedStatement(sql: "SELECT id, generation FROM sessions WHERE user_hash = ? AND device_id = ?")
        guard let row = try Row.fetchOne(statement, arguments: [Data(names.userHash), Int64(names.deviceID)]) else { return nil }
        return SessionRow(id: row["id"], generation: try rowGeneration(row, table: .sessions))
    }

    /// Reads and opens every part of a record, inside the caller's transaction.
    ///
    /// With `currentSessionOnly`, and when the record has a current session, reads that
    /// session and its skipped keys only (`SessionRecord(currentSessionOnly:…)`): a peer's first
    /// message after opening costs what its current session holds, not its history.
    static func readRecord(
        _ db: Database, _ names: SessionRowNames, row: SessionRow, sealer: ValueSealer, currentSessionOnly: Bool
    ) throws -> SessionPartsCache.Entry {
        guard let value = try DatabaseValue.fetchOne(db, sql: "SELECT sealed FROM sessions WHERE id = ?", arguments: [row.id]) else {
            throw SQLiteStoreError.damagedValue(table: SealedTable.sessions.name)
        }
        let header = try sealer.open(
            try blob(value, table: .sessions), table: .sessions, rowKey: ValueSealer.rowKey(names.rowKey, generation: row.generation))
        var currentPart: [UInt8]?
        let requiresPostQuantum: Bool
        let recoveryMarks: RecoveryMarks
        do {
            let decoded = try SessionRecordLayout.decodeCurrent(header)
            (currentPart, requiresPostQuantum, recoveryMarks) = (decoded.current, decoded.requiresPostQuantum, decoded.recoveryMarks)
        } catch {
            throw SQLiteStoreError.invalidValue(table: SealedTable.sessions.name)
        }
        if currentSessionOnly, var part = currentPart {
            currentPart = nil
            defer { SecureMemory.zero(&part) }
            let key = stateKey(of: try SessionState(serialized: part), sealer: sealer)
            // The rows of this session through the primary key (record, state key, slot), put in
            // age order here: ordered by `seq` in SQL, the planner would walk the age index over
            // every skipped key of the record.
            var skipped: [(sequence: Int64, entry: SkippedMessageKeyEntry)] = []
            let rows = try Row.fetchCursor(
                db, sql: "SELECT slot_hash, seq, sealed FROM skipped_keys WHERE record_id = ? AND state_key = ?",
                arguments: [row.id, Data(key)])
            let rowKeyPrefix = names.rowKey + key
            while let skippedRow = try rows.next() {
                skipped.append((skippedRow[1], try openSkippedKey(skippedRow, slotHashColumn: 0, sealedColumn: 2, rowKeyPrefix: rowKeyPrefix, sealer: sealer)))
            }
            skipped.sort { $0.sequence < $1.sequence }
            let maxSequence = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM skipped_keys WHERE record_id = ?", arguments: [row.id]) ?? 0
            let current = try SessionState(serializedWithoutSkippedMessageKeys: part, skippedMessageKeys: skipped.map(\.entry))
            return SessionPartsCache.Entry(
                recordID: row.id, generation: row.generation,
                record: SessionRecord(currentSessionOnly: current, requiresPostQuantum: requiresPostQuantum, recoveryMarks: recoveryMarks),
                currentKey: key, previousKeys: [], maxSequence: maxSequence)
        }
        var previousOrder: [[UInt8]] = []
        if let order = try DatabaseValue.fetchOne(db, sql: "SELECT sealed FROM session_orders WHERE record_id = ?", arguments: [row.id]) {
            let opened = try sealer.open(try blob(order, table: .sessionOrders), table: .sessionOrders, rowKey: names.rowKey)
            do { previousOrder = try SessionRecordLayout.decodePrevious(opened) } catch {
                throw SQLiteStoreError.invalidValue(table: SealedTable.sessionOrders.name)
            }
        }
        // Skipped keys of every session of the record, oldest first.
        var skipped: [[UInt8]: [SkippedMessageKeyEntry]] = [:]
        var maxSequence: Int64 = 0
        let rows = try Row.fetchCursor(
            db, sql: "SELECT state_key, slot_hash, seq, sealed FROM skipped_keys WHERE record_id = ? ORDER BY seq",
            arguments: [row.id])
        while let skippedRow = try rows.next() {
            let stateKey = [UInt8](skippedRow[0] as Data)
            maxSequence = max(maxSequence, skippedRow[2])
            skipped[stateKey, default: []].append(
                try openSkippedKey(skippedRow, slotHashColumn: 1, sealedColumn: 3, rowKeyPrefix: names.rowKey + stateKey, sealer: sealer))
        }
        func session(_ part: [UInt8], stateKey: [UInt8]) throws -> SessionState {
            try SessionState(serializedWithoutSkippedMessageKeys: part, skippedMessageKeys: skipped[stateKey] ?? [])
        }
        var current: SessionState?
        var currentKey: [UInt8]?
        if var part = currentPart {
            currentPart = nil
            defer { SecureMemory.zero(&part) }
            let state = try SessionState(serialized: part)
            let key = stateKey(of: state, sealer: sealer)
            current = try session(part, stateKey: key)
            currentKey = key
        }
        var previous: [SessionState] = []
        for stateKey in previousOrder {
            guard let value = try DatabaseValue.fetchOne(
                db, sql: "SELECT sealed FROM session_states WHERE record_id = ? AND state_key = ?",
                arguments: [row.id, Data(stateKey)]) else {
                throw SQLiteStoreError.damagedValue(table: SealedTable.sessionStates.name)
            }
            var part = try sealer.open(try blob(value, table: .sessionStates), table: .sessionStates, rowKey: names.rowKey + stateKey).bytes
            defer { SecureMemory.zero(&part) }
            previous.append(try session(part, stateKey: stateKey))
        }
        let record = try SessionRecord(
            restoringCurrentSession: current, previousSessions: previous, requiresPostQuantum: requiresPostQuantum,
            recoveryMarks: recoveryMarks)
        return SessionPartsCache.Entry(
            recordID: row.id, generation: row.generation, record: record, currentKey: currentKey, previousKeys: previousOrder,
            maxSequence: maxSequence)
    }

    /// The skipped key of a `skipped_keys` row (its `slot_hash` and `sealed` columns, at the
    /// given positions), opened for the row key `rowKeyPrefix || slot_hash` (the prefix: the
    /// record's row key and the session's state key) and checked.
    private static func openSkippedKey(
        _ skippedRow: Row, slotHashColumn: Int, sealedColumn: Int, rowKeyPrefix: [UInt8], sealer: ValueSealer
    ) throws -> SkippedMessageKeyEntry {
        let slotHash = skippedRow[slotHashColumn] as Data
        var rowKey = rowKeyPrefix
        rowKey.append(contentsOf: slotHash)
        let opened = try sealer.open(try blob(skippedRow[sealedColumn], table: .skippedKeys), table: .skippedKeys, rowKey: rowKey)
        // `slot || key`, then (since the keys' times are kept) `|| u64(storedAt)`.
        let keyEnd = SkippedMessageKeyEntry.slotByteCount + 32
        guard opened.count == keyEnd || opened.count == keyEnd + 8 else {
            throw SQLiteStoreError.invalidValue(table: SealedTable.skippedKeys.name)
        }
        return try opened.withUnsafeBytes { buffer throws(SessionError) -> SkippedMessageKeyEntry in
            let slot = Array(buffer.prefix(SkippedMessageKeyEntry.slotByteCount))
            let key = SecureBytes(copying: UnsafeRawBufferPointer(rebasing: buffer[SkippedMessageKeyEntry.slotByteCount ..< keyEnd]))
            let storedAt = buffer[keyEnd...].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            return try SkippedMessageKeyEntry(slot: slot, messageKey: key, storedAt: storedAt)
        }
    }

    /// The key of a session within its record: a keyed hash of its role and EK_A.
    static func stateKey(of session: borrowing SessionState, sealer: ValueSealer) -> [UInt8] {
        sealer.rowKey([session.role.rawValue] + session.baseKey.rawRepresentation, in: .sessionState)
    }
}

/// The manager's loads for a change come from the cache, checked by the commit.
@_spi(Storage) extension SQLiteProtocolStore: CachingSessionStore {
    /// The record for `address` as this store last read or wrote it, without a trip to the
    /// file (the commit's compare-and-swap refuses it if another process changed the record
    /// since); read from the file when this store holds none, with `currentSessionSuffices`
    /// its current session only (when it has one).
    /// - Throws: the errors of `loadSession(for:)`.
    @_spi(Storage) public func loadSessionForUpdate(
        for address: ProtocolAddress, currentSessionSuffices: Bool
    ) async throws(SessionError) -> SessionRecord? {
        if let cached = sessionCache.entry(for: address), currentSessionSuffices || !cached.isPartial { return cached.record }
        guard currentSessionSuffices else { return try await loadSession(for: address) }
        let names = SessionRowNames(address, sealer: sealer)
        do {
            let loaded = try await readTransaction { [sealer] db -> SessionPartsCache.Entry? in
                guard let row = try Self.sessionRow(db, names) else { return nil }
                return try Self.readRecord(db, names, row: row, sealer: sealer, currentSessionOnly: true)
            }
            guard let loaded else {
                sessionCache.remove(address)
                return nil
            }
            sessionCache.store(loaded, for: address)
            return loaded.record
        } catch {
            throw Self.sessionError(error)
        }
    }
}

/// The hashed names of one peer device's `sessions` row.
struct SessionRowNames: Sendable {
    /// The keyed hash of the user id.
    let userHash: [UInt8]
    /// The device id (in clear).
    let deviceID: UInt32
    /// What every value of the record is sealed for: the user hash and the device id.
    let rowKey: [UInt8]

    init(_ address: ProtocolAddress, sealer: ValueSealer) {
        userHash = sealer.rowKey(Array(address.userIDBytes), in: .sessionUser)
        deviceID = address.deviceID
        var rowKey = userHash
        rowKey.appendBigEndian(address.deviceID)
        self.rowKey = rowKey
    }
}
