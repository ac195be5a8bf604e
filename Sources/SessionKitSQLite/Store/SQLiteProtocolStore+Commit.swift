import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives
import Verification

/// `ProtocolStore`: every write of a `SessionManager` operation in one IMMEDIATE transaction
/// (the session's parts, the prekeys X3DH used up, sender-key chains, and the peer's identity
/// key in the trust table), each state compared and swapped on its generation, so that a second
/// process on the file, or a stale copy, can never roll a state back.
extension SQLiteProtocolStore: ProtocolStore {
    /// `true`: this store keeps the trust records, and a `SessionManager` whose trust evaluator
    /// is this store records identity keys in the same transaction as the state.
    public var appliesIdentityRecords: Bool { true }

    /// Applies every write of `commit` in one transaction, or none.
    /// - Throws: `SessionError.staleState` when a stored generation differs from the written
    ///   state's, `.unknownPreKey` when a one-time prekey the commit uses up is no longer
    ///   held, `.storage` naming the table when the file fails or a value is damaged; nothing
    ///   changed in every case.
    public func commit(_ commit: StoreCommit) async throws(SessionError) {
        let plan = commit.session.map { SessionWritePlan($0, sealer: sealer) }
        let cached = plan.flatMap { sessionCache.entry(for: $0.address) }
        do {
            let entry = try await writeTransaction { [sealer] db -> SessionPartsCache.Entry? in
                var entry: SessionPartsCache.Entry?
                if let plan { entry = try Self.write(plan, cached: cached, db: db, sealer: sealer) }
                if let write = commit.sendingChain { try Self.write(write, db: db, sealer: sealer) }
                if let write = commit.receiverState { try Self.write(write, db: db, sealer: sealer) }
                try Self.writeGroupState(of: commit, db: db, sealer: sealer)
                if commit.changesPreKeys {
                    guard var keys = try Self.readPreKeys(db, sealer: sealer) else { throw SessionError.unknownPreKey }
                    try commit.applyPreKeyChanges(to: &keys)
                    try Self.writePreKeys(keys, db: db, sealer: sealer)
                }
                if let write = commit.identity {
                    _ = try Self.recordObservation(
                        write.identityKey, device: write.address.deviceID, user: TrustUserID(write.address),
                        db: db, sealer: sealer)
                }
                return entry
            }
            if let plan, let entry { sessionCache.store(entry, for: plan.address) }
        } catch {
            if let plan { sessionCache.remove(plan.address) }
            throw Self.sessionError(error)
        }
    }

    // MARK: Sessions

    /// Writes the parts of a record that changed since `cached` (or since what the file holds),
    /// after comparing generations; returns what the file now holds.
    private static func write(
        _ plan: SessionWritePlan, cached: SessionPartsCache.Entry?, db: Database, sealer: ValueSealer
    ) throws -> SessionPartsCache.Entry {
        let row = try sessionRow(db, plan.names)
        guard (row?.generation ?? 0) == plan.expectedGeneration else { throw SessionError.staleState }
        // What the file holds now: the cache when it is this row at this generation, else read
        // the keys (previous sessions are then all rewritten, skipped keys diffed by slot).
        var previousOrder: [[UInt8]]?     // nil: not known, write it
        var previousDigests: [[UInt8]: [UInt8]] = [:]
        var storedPrevious = Set<[UInt8]>()
        var slots: [[UInt8]: Set<[UInt8]>] = [:]
        var maxSequence: Int64 = 0
        if let row {
            if let cached, cached.recordID == row.id, cached.generation == row.generation {
                previousOrder = cached.previousOrder
                previousDigests = cached.previousDigests
                storedPrevious = Set(cached.previousDigests.keys)
                slots = cached.slots
                maxSequence = cached.maxSequence
            } else {
                for key in try Data.fetchAll(db, sql: "SELECT state_key FROM session_states WHERE record_id = ?", arguments: [row.id]) {
                    storedPrevious.insert([UInt8](key))
                }
                let rows = try Row.fetchCursor(db, sql: "SELECT state_key, slot_hash, seq FROM skipped_keys WHERE record_id = ?",
                                               arguments: [row.id])
                while let skippedRow = try rows.next() {
                    slots[[UInt8](skippedRow["state_key"] as Data), default: []].insert([UInt8](skippedRow["slot_hash"] as Data))
                    maxSequence = max(maxSequence, skippedRow["seq"])
                }
            }
        }
        let generation = row == nil ? try firstGeneration(for: plan.names.rowKey, db: db) : plan.expectedGeneration + 1
        var header = SessionRecordLayout.encode(
            current: plan.current?.bytes, requiresPostQuantum: plan.record.requiresPostQuantum,
            recoveryMarks: plan.record.recoveryMarks)
        defer { SecureMemory.zero(&header) }
        let sealedHeader = Data(try sealer.seal(header, table: .sessions, rowKey: plan.names.rowKey))
        let recordID: Int64
        if let row {
            try db.cachedStatement(sql: "UPDATE sessions SET generation = ?, sealed = ? WHERE id = ?")
                .execute(arguments: [Self.column(generation), sealedHeader, row.id])
            recordID = row.id
        } else {
            try db.execute(sql: "INSERT INTO sessions (user_hash, device_id, generation, sealed) VALUES (?, ?, ?, ?)",
                           arguments: [Data(plan.names.userHash), Int64(plan.names.deviceID), Self.column(generation), sealedHeader])
            recordID = db.lastInsertedRowID
        }
        // The order of the previous sessions: only when it changed.
        let order = plan.previous.map(\.stateKey)
        if previousOrder != order {
            if order.isEmpty {
                try db.execute(sql: "DELETE FROM session_orders WHERE record_id = ?", arguments: [recordID])
            } else {
                let sealed = try sealer.seal(SessionRecordLayout.encode(previous: order), table: .sessionOrders, rowKey: plan.names.rowKey)
                try db.execute(sql: "INSERT OR REPLACE INTO session_orders (record_id, sealed) VALUES (?, ?)",
                               arguments: [recordID, Data(sealed)])
            }
        }
        // Previous sessions: write the changed ones, delete the ones no longer previous.
        var newDigests: [[UInt8]: [UInt8]] = [:]
        for part in plan.previous {
            newDigests[part.stateKey] = part.digest
            guard previousDigests[part.stateKey].map({ !ConstantTime.equals($0, part.digest) }) ?? true else { continue }
            let sealed = try sealer.seal(part.bytes, table: .sessionStates, rowKey: plan.names.rowKey + part.stateKey)
            try db.execute(sql: "INSERT OR REPLACE INTO session_states (record_id, state_key, sealed) VALUES (?, ?, ?)",
                           arguments: [recordID, Data(part.stateKey), Data(sealed)])
        }
        for stateKey in storedPrevious where newDigests[stateKey] == nil {
            try db.execute(sql: "DELETE FROM session_states WHERE record_id = ? AND state_key = ?",
                           arguments: [recordID, Data(stateKey)])
        }
        // Skipped keys: delete the used and evicted ones, insert the new ones (oldest first).
        let parts = (plan.current.map { [$0] } ?? []) + plan.previous
        var newSlots: [[UInt8]: Set<[UInt8]>] = [:]
        for part in parts { newSlots[part.stateKey] = Set(part.skipped.map(\.slotHash)) }
        for (stateKey, stored) in slots {
            let kept = newSlots[stateKey] ?? []
            if kept.isEmpty {
                try db.execute(sql: "DELETE FROM skipped_keys WHERE record_id = ? AND state_key = ?", arguments: [recordID, Data(stateKey)])
                continue
            }
            for slotHash in stored where !kept.contains(slotHash) {
                try db.execute(sql: "DELETE FROM skipped_keys WHERE record_id = ? AND state_key = ? AND slot_hash = ?",
                               arguments: [recordID, Data(stateKey), Data(slotHash)])
            }
        }
        for part in parts {
            let stored = slots[part.stateKey] ?? []
            for skippedKey in part.skipped where !stored.contains(skippedKey.slotHash) {
                let (slotHash, entry) = (skippedKey.slotHash, skippedKey.entry)
                maxSequence += 1
                var value: [UInt8] = []
                value.reserveCapacity(entry.slot.count + entry.messageKey.count)
                value += entry.slot
                entry.messageKey.withUnsafeBytes { value.append(contentsOf: $0) }
                defer { SecureMemory.zero(&value) }
                let sealed = try sealer.seal(value, table: .skippedKeys, rowKey: plan.names.rowKey + part.stateKey + slotHash)
                try db.execute(
                    sql: "INSERT INTO skipped_keys (record_id, state_key, slot_hash, seq, sealed) VALUES (?, ?, ?, ?, ?)",
                    arguments: [recordID, Data(part.stateKey), Data(slotHash), maxSequence, Data(sealed)])
            }
        }
        var record = plan.record
        record.generation = generation
        return SessionPartsCache.Entry(
            recordID: recordID, generation: generation, record: record, previousOrder: order, previousDigests: newDigests,
            slots: newSlots,
            maxSequence: maxSequence)
    }
}
