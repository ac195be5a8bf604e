import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives
import Verification

/// `ProtocolStore`: every write of a `SessionManager` operation in one IMMEDIATE transaction
/// (the session's parts, the prekeys X3DH used up, sender-key chains, the send log's entries,
/// and the peer's identity key in the trust table), each state compared and swapped on its generation, so that a second
/// process on the file, or a stale copy, can never roll a state back.
extension SQLiteProtocolStore: ProtocolStore {
    /// `true`: this store keeps the trust records, and a `SessionManager` whose trust evaluator
    /// is this store records identity keys in the same transaction as the state.
    public var appliesIdentityRecords: Bool { true }

    /// Applies every write of `commit` in one transaction, or none.
    /// - Throws: `SessionError.staleState` when a stored generation differs from the written
    ///   state's or the commit's replay record is held already, `.unknownPreKey` when a
    ///   one-time prekey the commit uses up is no longer held or the signed prekey's record is
    ///   full, `.storage` naming the table when the file fails or a value is damaged; nothing
    ///   changed in every case.
    public func commit(_ commit: StoreCommit) async throws(SessionError) {
        let plans = commit.sessions.map { SessionWritePlan($0, basis: sessionCache.entry(for: $0.address), sealer: sealer) }
        do {
            let entries = try await writeTransaction { [sealer, preKeysCache, trustCache] db -> [SessionPartsCache.Entry] in
                // The trust decisions made on cached records still hold (`TrustRecordCache`).
                for user in Set(plans.map { TrustUserID($0.address) }) {
                    try Self.checkCachedTrust(of: user, cache: trustCache, db: db, sealer: sealer)
                }
                let entries = try plans.map { plan throws -> SessionPartsCache.Entry in try Self.write(plan, db: db, sealer: sealer) }
                if let write = commit.sendingChain { try Self.write(write, db: db, sealer: sealer) }
                if let write = commit.receiverState { try Self.write(write, db: db, sealer: sealer) }
                try Self.writeGroupState(of: commit, db: db, sealer: sealer)
                if commit.changesPreKeys { try Self.applyPreKeyChanges(of: commit, db: db, sealer: sealer, cache: preKeysCache) }
                if let changes = commit.sendLog { try Self.writeSendLog(changes, db: db, sealer: sealer) }
                if let write = commit.identity {
                    _ = try Self.recordObservation(
                        write.identityKey, device: write.address.deviceID, user: TrustUserID(write.address),
                        db: db, sealer: sealer)
                }
                return entries
            }
            for (plan, entry) in zip(plans, entries) { sessionCache.store(entry, for: plan.address) }
            if let write = commit.identity { trustCache.remove(TrustUserID(write.address)) }
        } catch {
            for plan in plans { sessionCache.remove(plan.address) }
            if let write = commit.identity { trustCache.remove(TrustUserID(write.address)) }
            throw Self.sessionError(error)
        }
    }

    // MARK: Sessions

    /// Writes the parts of a record that changed since the plan's basis (or, when the file no
    /// longer holds the basis, since what the file holds), after comparing generations; returns
    /// what the file now holds.
    private static func write(_ plan: SessionWritePlan, db: Database, sealer: ValueSealer) throws -> SessionPartsCache.Entry {
        let row = try sessionRow(db, plan.names)
        guard (row?.generation ?? 0) == plan.expectedGeneration else { throw SessionError.staleState }
        let validBasis = plan.basis.flatMap { basis in
            row.flatMap { $0.id == basis.recordID && $0.generation == basis.generation ? basis : nil }
        }
        // A plan measured against a basis the file no longer holds is stale (the generations
        // above already refuse it; this keeps a plan of a partial record from ever being applied
        // in full).
        if plan.basis != nil, validBasis == nil { throw SessionError.staleState }
        // A basis read without its previous sessions does not say what the file holds of them:
        // a whole record is then compared with the file.
        let basis = validBasis?.isPartial == true && !plan.record.omitsPreviousSessions ? nil : validBasis
        // A record without its previous sessions commits its current session only, over the
        // same current session (anything else needs the whole record: load it again).
        if plan.record.omitsPreviousSessions, basis == nil || plan.current == nil || plan.current?.stateKey != basis?.current?.stateKey {
            throw SessionError.staleState
        }
        // Without a basis: what the file holds (previous sessions are then all rewritten,
        // skipped keys compared slot by slot).
        var storedPrevious = Set<[UInt8]>()
        var storedSlots: [[UInt8]: Set<[UInt8]>] = [:]
        var maxSequence = basis?.maxSequence ?? 0
        if let row, basis == nil {
            for key in try Data.fetchAll(db, sql: "SELECT state_key FROM session_states WHERE record_id = ?", arguments: [row.id]) {
                storedPrevious.insert([UInt8](key))
            }
            let rows = try Row.fetchCursor(db, sql: "SELECT state_key, slot_hash, seq FROM skipped_keys WHERE record_id = ?",
                                           arguments: [row.id])
            while let skippedRow = try rows.next() {
                storedSlots[[UInt8](skippedRow["state_key"] as Data), default: []].insert([UInt8](skippedRow["slot_hash"] as Data))
                maxSequence = max(maxSequence, skippedRow["seq"])
            }
        }
        let generation = row == nil ? try firstGeneration(for: plan.names.rowKey, db: db) : plan.expectedGeneration + 1
        var header = SessionRecordLayout.encode(
            current: plan.current?.serialized(in: plan.record), requiresPostQuantum: plan.record.requiresPostQuantum,
            recoveryMarks: plan.record.recoveryMarks)
        defer { SecureMemory.zero(&header) }
        let sealedHeader = Data(try sealer.seal(
            header, table: .sessions, rowKey: ValueSealer.rowKey(plan.names.rowKey, generation: generation)))
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
        let parts = (plan.current.map { [$0] } ?? []) + plan.previous
        // The order of the previous sessions and the set of sessions: compared as arrays (the
        // usual case: nothing moved), as sets only when something did.
        let formerOrder = basis?.previousOrder
        let order = plan.previousAsInBasis ? formerOrder ?? [] : plan.previous.map(\.stateKey)
        let sameSessions = basis.map { order == formerOrder && plan.current?.stateKey == $0.current?.stateKey } ?? false
        if formerOrder != order {
            if order.isEmpty {
                try db.execute(sql: "DELETE FROM session_orders WHERE record_id = ?", arguments: [recordID])
            } else {
                let sealed = try sealer.seal(SessionRecordLayout.encode(previous: order), table: .sessionOrders, rowKey: plan.names.rowKey)
                try db.execute(sql: "INSERT OR REPLACE INTO session_orders (record_id, sealed) VALUES (?, ?)",
                               arguments: [recordID, Data(sealed)])
            }
        }
        // Previous sessions: write the changed ones, delete the ones no longer previous, and
        // the skipped keys of sessions no longer held.
        for part in plan.previous where basis == nil || !part.isUnchangedPrevious {
            let sealed = try sealer.seal(part.serialized(in: plan.record), table: .sessionStates, rowKey: plan.names.rowKey + part.stateKey)
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO session_states (record_id, state_key, sealed) VALUES (?, ?, ?)")
                .execute(arguments: [recordID, Data(part.stateKey), Data(sealed)])
        }
        if !sameSessions {
            let previousKept = Set(order)
            // (`order`, not the plan's previous parts: those are left out when the previous
            // sessions are the basis's.)
            let kept = Set(order + (plan.current.map { [$0.stateKey] } ?? []))
            let formerPrevious = basis.map { Set($0.previousOrder) } ?? storedPrevious
            for stateKey in formerPrevious where !previousKept.contains(stateKey) {
                try db.cachedStatement(sql: "DELETE FROM session_states WHERE record_id = ? AND state_key = ?")
                    .execute(arguments: [recordID, Data(stateKey)])
            }
            let formerSessions = basis.map { Set($0.previousOrder + ($0.current.map { [$0.stateKey] } ?? [])) } ?? Set(storedSlots.keys)
            for stateKey in formerSessions where !kept.contains(stateKey) {
                try db.cachedStatement(sql: "DELETE FROM skipped_keys WHERE record_id = ? AND state_key = ?")
                    .execute(arguments: [recordID, Data(stateKey)])
            }
        }
        // Skipped keys, per session: the removed keys' rows are deleted and the added keys
        // inserted (oldest first).
        var remarked: [Int?] = []
        for part in parts {
            let removed: [[UInt8]]
            let added: [SessionWritePlan.SkippedKey]
            if basis != nil, part.basisToken != nil, let changes = part.skippedChanges {
                (removed, added) = (changes.removed, changes.added)
            } else {
                let all = part.allSkippedKeys(in: plan.record, sealer: sealer)
                var stored = storedSlots[part.stateKey] ?? []
                if basis != nil, part.basisToken != nil {
                    // A session of the basis whose changes were not followed: read its slots.
                    for slotHash in try Data.fetchAll(
                        db, sql: "SELECT slot_hash FROM skipped_keys WHERE record_id = ? AND state_key = ?",
                        arguments: [recordID, Data(part.stateKey)]) {
                        stored.insert([UInt8](slotHash))
                    }
                }
                let now = Set(all.map(\.slotHash))
                removed = stored.filter { !now.contains($0) }
                added = all.filter { !stored.contains($0.slotHash) }
            }
            if basis == nil || !part.isUnchangedPrevious { remarked.append(part.previousIndex) }
            for slotHash in removed {
                try db.cachedStatement(sql: "DELETE FROM skipped_keys WHERE record_id = ? AND state_key = ? AND slot_hash = ?")
                    .execute(arguments: [recordID, Data(part.stateKey), Data(slotHash)])
            }
            for skippedKey in added {
                let (slotHash, entry) = (skippedKey.slotHash, skippedKey.entry)
                maxSequence += 1
                var value: [UInt8] = []
                value.reserveCapacity(entry.slot.count + entry.messageKey.count + 8)
                value += entry.slot
                entry.messageKey.withUnsafeBytes { value.append(contentsOf: $0) }
                // The time the key was stored (`SessionConfiguration.skippedKeyMaxAge`); a key
                // without one (loaded from a value written before times were kept) has none.
                if entry.storedAt != 0 { value.appendBigEndian(entry.storedAt) }
                defer { SecureMemory.zero(&value) }
                let sealed = try sealer.seal(value, table: .skippedKeys, rowKey: plan.names.rowKey + part.stateKey + slotHash)
                try db.cachedStatement(sql: "INSERT INTO skipped_keys (record_id, state_key, slot_hash, seq, sealed) VALUES (?, ?, ?, ?, ?)")
                    .execute(arguments: [recordID, Data(part.stateKey), Data(slotHash), maxSequence, Data(sealed)])
            }
        }
        // What the file holds now: the record, with the sessions written marked anew.
        var record = plan.record
        record.generation = generation
        let token = UInt64.random(in: 1 ... UInt64.max)
        record.markSkippedKeysPersisted(
            token: token, current: remarked.contains { $0 == nil }, previousIndices: remarked.compactMap { $0 })
        func stored(_ part: SessionWritePlan.Part, _ summary: SessionChangeSummary) -> SessionPartsCache.StoredPart {
            let kept = basis != nil && part.isUnchangedPrevious
            return SessionPartsCache.StoredPart(stateKey: part.stateKey, summary: summary, token: kept ? (part.basisToken ?? token) : token)
        }
        let current = plan.current.flatMap { part in record.currentSummary.map { stored(part, $0) } }
        if let basis, plan.previousAsInBasis {
            return SessionPartsCache.Entry(
                recordID: recordID, generation: generation, record: record, current: current, previous: basis.previous,
                maxSequence: maxSequence)
        }
        let summaries = record.sessionSummaries.previous
        return SessionPartsCache.Entry(
            recordID: recordID, generation: generation, record: record, current: current,
            previous: zip(plan.previous, summaries).map { stored($0.0, $0.1) }, maxSequence: maxSequence)
    }
}
