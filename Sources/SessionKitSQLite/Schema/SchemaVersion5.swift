import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// Schema 5: replay records, the EK_A replay records (SPEC §3) in rows of their own.
///
///     prekey_replay_records (spk_hash, base_key_hash,     one EK_A recorded under a signed
///                            PK (both)) WITHOUT ROWID     prekey: no value, the row is the record
///
/// `spk_hash` is the keyed hash of the signed prekey id (`u32(spk_id)`, `RowKeyDomain
/// .replaySignedPreKey`) and `base_key_hash` that of `u32(spk_id) || EK_A`
/// (`.replayBaseKey`): a prekey message looks its record up with one primary-key SELECT and
/// adds it with one INSERT, whatever the number of records, and a signed prekey's records are
/// deleted with one range DELETE on `spk_hash` in the write that deletes the signed prekey.
/// The number of records per signed prekey (for the cap) is counted in the prekeys blob
/// (`LocalPreKeys` persisted version 3), which no longer holds the records themselves and so
/// no longer grows with them. The file shows how many records each (hashed) signed prekey has,
/// as the prekey messages a device accepted; it does not show EK_A.
///
/// Moving the records of a file written before schema 5 needs the file's keys (the records sit
/// in the sealed prekeys blob, `LocalPreKeys` version 2): `moveReplayRecords(_:sealer:)` runs in
/// the opening transaction once the key is checked, opens the blob, inserts its records as rows
/// and re-seals the blob as version 3 under `SealedTable.preKeys` (value version 5). A blob that
/// does not open or load is left as it is (the store then reports the prekeys as damaged, as
/// before the migration).
enum SchemaVersion5 {
    /// This schema's version (`Schema.steps` position + 1).
    static let version = 5

    /// Creates schema 5's table.
    @Sendable
    static func apply(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE prekey_replay_records (
                spk_hash BLOB NOT NULL CHECK (length(spk_hash) = 32),
                base_key_hash BLOB NOT NULL CHECK (length(base_key_hash) = 32),
                PRIMARY KEY (spk_hash, base_key_hash)
            ) WITHOUT ROWID;
            """)
    }

    /// Moves the replay records of a schema-4 prekeys blob into `prekey_replay_records` and
    /// re-seals the blob without them, inside the caller's (opening) transaction.
    static func moveReplayRecords(_ db: Database, sealer: ValueSealer) throws {
        guard let value = try DatabaseValue.fetchOne(db, sql: "SELECT sealed FROM prekeys WHERE id = 1"),
              case let .blob(data) = value.storage,
              let opened = try? sealer.open([UInt8](data), table: .preKeysBeforeSchema5, rowKey: SQLiteProtocolStore.singleRowKey)
        else { return }
        var bytes = opened.bytes
        defer { SecureMemory.zero(&bytes) }
        guard let (keys, records) = try? LocalPreKeys.upgrading(serialized: bytes) else { return }
        for record in records { try SQLiteProtocolStore.insert(record, db: db, sealer: sealer) }
        try SQLiteProtocolStore.writePreKeys(keys, db: db, sealer: sealer, cache: nil)
    }
}
