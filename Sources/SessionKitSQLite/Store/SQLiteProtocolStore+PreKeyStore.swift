import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// The prekeys are one sealed `LocalPreKeys.serialized()` blob in the one-row table `prekeys`;
/// their EK_A replay records are rows of `prekey_replay_records` (schema 5), one per record,
/// keyed by hashes of the signed prekey id and of the record, so that a prekey message reads
/// and writes one row of them whatever their number.
extension SQLiteProtocolStore: PreKeyStore {
    /// The prekeys, or `nil` when none were stored yet.
    /// - Throws: `SessionError.storage` when the file fails or the blob is damaged,
    ///   `.invalidPayload` / `.unsupportedVersion` when it opens but does not load.
    public func loadPreKeys() async throws(SessionError) -> LocalPreKeys? {
        do {
            return try await readTransaction { [sealer, preKeysCache] db in try Self.readPreKeys(db, sealer: sealer, cache: preKeysCache) }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Runs `update` on the stored prekeys inside one write transaction and stores what it
    /// leaves (deleting the row when it leaves `nil`), deleting the replay records of every
    /// signed prekey it removed or replaced in the same transaction. When `update` throws, the
    /// transaction rolls back, nothing is stored and its error is rethrown.
    /// - Throws: the error of `update`; `SessionError.storage` when the file fails or the blob is
    ///   damaged (then nothing changed).
    public func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        do {
            return try await writeTransaction { [sealer, preKeysCache] db in
                let stored = try Self.readPreKeys(db, sealer: sealer, cache: preKeysCache)
                var keys = stored
                let result = try update(&keys)
                if let stored {
                    for id in stored.signedPreKeyIDsRemoved(in: keys) { try Self.deleteReplayRecords(signedPreKeyID: id, db: db, sealer: sealer) }
                } else {
                    // No prekeys, so no record can stand: none is left for a signed prekey reissued later.
                    try db.execute(sql: "DELETE FROM prekey_replay_records")
                }
                if let keys {
                    try Self.writePreKeys(keys, db: db, sealer: sealer, cache: preKeysCache)
                } else {
                    try db.execute(sql: "DELETE FROM prekeys WHERE id = 1")
                }
                return result
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Whether the replay record of `baseKey` under the signed prekey `signedPreKeyID` is held:
    /// one primary-key lookup.
    /// - Throws: `SessionError.storage` when the file fails.
    public func hasRecordedBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) async throws(SessionError) -> Bool {
        let (spkHash, recordHash) = Self.replayRow(BaseKeyRecord(signedPreKeyID: signedPreKeyID, baseKey: baseKey), sealer: sealer)
        do {
            return try await singleStatementRead { db in
                try Self.replayRowExists(spkHash: spkHash, recordHash: recordHash, db: db)
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Adds `records` as prekey messages would (each counted under its signed prekey, within
    /// the cap, and stored as a row), in one transaction: for tests and benchmarks that need
    /// many records.
    /// - Throws: `SessionError.unknownPreKey` when a signed prekey is not held or its record
    ///   is full, `.staleState` when a record is held already (or repeated), `.storage` when
    ///   the file fails; nothing changed then.
    @_spi(Testing) public func addBaseKeyRecords(_ records: [BaseKeyRecord]) async throws(SessionError) {
        do {
            try await writeTransaction { [sealer, preKeysCache] db in
                guard var keys = try Self.readPreKeys(db, sealer: sealer, cache: preKeysCache) else { throw SessionError.unknownPreKey }
                for record in records {
                    try keys.count(record)
                    try Self.insert(record, db: db, sealer: sealer)
                }
                try Self.writePreKeys(keys, db: db, sealer: sealer, cache: preKeysCache)
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// `StoreCommit`'s prekey changes inside the commit's transaction: refuses a replay record
    /// already held (`staleState`: another writer completed X3DH with this EK_A since it was
    /// looked up), applies the consumption to the stored prekeys (one-time prekeys deleted, the
    /// record counted within the cap) and adds the record's row.
    static func applyPreKeyChanges(of commit: StoreCommit, db: Database, sealer: ValueSealer, cache: PreKeysCache?) throws {
        guard let record = commit.baseKeyRecord else { return }
        let (spkHash, recordHash) = replayRow(record, sealer: sealer)
        guard try !replayRowExists(spkHash: spkHash, recordHash: recordHash, db: db) else { throw SessionError.staleState }
        guard var keys = try readPreKeys(db, sealer: sealer, cache: cache) else { throw SessionError.unknownPreKey }
        try commit.applyPreKeyChanges(to: &keys)
        try writePreKeys(keys, db: db, sealer: sealer, cache: cache)
        try db.cachedStatement(sql: "INSERT INTO prekey_replay_records (spk_hash, base_key_hash) VALUES (?, ?)")
            .execute(arguments: [Data(spkHash), Data(recordHash)])
    }

    /// Stores `keys`, inside the caller's transaction, and remembers them in `cache`.
    static func writePreKeys(_ keys: LocalPreKeys, db: Database, sealer: ValueSealer, cache: PreKeysCache?) throws {
        var bytes = keys.serialized()
        defer { SecureMemory.zero(&bytes) }
        let sealed = try sealer.seal(bytes, table: .preKeys, rowKey: singleRowKey)
        try db.execute(sql: "INSERT OR REPLACE INTO prekeys (id, sealed) VALUES (1, ?)", arguments: [Data(sealed)])
        cache?.store(keys, sealedAs: sealed)
    }

    /// The stored prekeys, or `nil`, inside the caller's transaction: from `cache` when the
    /// file holds the sealed value they were last read or written as, else opened and loaded
    /// (and remembered).
    static func readPreKeys(_ db: Database, sealer: ValueSealer, cache: PreKeysCache?) throws -> LocalPreKeys? {
        guard let value = try DatabaseValue.fetchOne(db, sql: "SELECT sealed FROM prekeys WHERE id = 1") else { return nil }
        let sealed = try blob(value, table: .preKeys)
        if let keys = cache?.keys(sealedAs: sealed) { return keys }
        let opened = try sealer.open(sealed, table: .preKeys, rowKey: singleRowKey)
        var bytes = opened.bytes
        defer { SecureMemory.zero(&bytes) }
        let keys = try LocalPreKeys(serialized: bytes)
        cache?.store(keys, sealedAs: sealed)
        return keys
    }

    // MARK: Replay records

    /// The row of `record`: the keyed hashes of `u32(spk_id)` and of `u32(spk_id) || EK_A`.
    static func replayRow(_ record: BaseKeyRecord, sealer: ValueSealer) -> (spkHash: [UInt8], recordHash: [UInt8]) {
        var id: [UInt8] = []
        id.appendBigEndian(record.signedPreKeyID)
        return (sealer.rowKey(id, in: .replaySignedPreKey), sealer.rowKey(id + record.baseKey.rawRepresentation, in: .replayBaseKey))
    }

    /// Whether the row is held, inside the caller's transaction.
    static func replayRowExists(spkHash: [UInt8], recordHash: [UInt8], db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM prekey_replay_records WHERE spk_hash = ? AND base_key_hash = ?"),
            arguments: [Data(spkHash), Data(recordHash)]) ?? false
    }

    /// Adds the row of `record`, inside the caller's transaction.
    /// - Throws: `SessionError.staleState` when it is held already.
    static func insert(_ record: BaseKeyRecord, db: Database, sealer: ValueSealer) throws {
        let (spkHash, recordHash) = replayRow(record, sealer: sealer)
        guard try !replayRowExists(spkHash: spkHash, recordHash: recordHash, db: db) else { throw SessionError.staleState }
        try db.cachedStatement(sql: "INSERT INTO prekey_replay_records (spk_hash, base_key_hash) VALUES (?, ?)")
            .execute(arguments: [Data(spkHash), Data(recordHash)])
    }

    /// Deletes every record of the signed prekey `signedPreKeyID`, inside the caller's transaction.
    static func deleteReplayRecords(signedPreKeyID: UInt32, db: Database, sealer: ValueSealer) throws {
        var id: [UInt8] = []
        id.appendBigEndian(signedPreKeyID)
        try db.execute(sql: "DELETE FROM prekey_replay_records WHERE spk_hash = ?",
                       arguments: [Data(sealer.rowKey(id, in: .replaySignedPreKey))])
    }
}
