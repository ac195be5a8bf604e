import GRDB

/// The schema step that adds the store epoch (restore detection; issue 19).
///
///     store_epoch (id = 1 PK, sealed)     u64(epoch), big-endian
///
/// The epoch counts the opens of the file: every open advances it, in the opening transaction,
/// and then writes the same value beside the storage key (`StoreEpochKeeper`). A file whose
/// epoch is behind the one kept beside the key is an older copy of itself (a restored backup):
/// see `SQLiteProtocolStore.restoredFromOlderCopy`. The value is sealed (the table's subkey, row
/// key 1), so nobody without the storage key can move it forward in an old copy.
///
/// The step creates the table; the opening transaction that runs it finds no row, treats the
/// file as being at epoch 0, and writes the next epoch. The name says what the step does rather
/// than its number: `Schema.steps` gives its number (`SealedTable.storeEpoch.valueVersion` must
/// equal it).
enum SchemaStoreEpoch {
    /// Creates the `store_epoch` table.
    @Sendable
    static func apply(_ db: Database) throws {
        try SchemaOneRowSealedTable.create("store_epoch", in: db)
    }
}
