import GRDB

/// Schema 3: trust per user.
///
///     trust_users (user_hash PK, sealed)     one user's TrustRecord (`TrustRecordCoding`, value
///                                            version 3): key, status, devices, superseded keys
///
/// A user's devices share one identity key, so trust is recorded per user. The schema-1 `trust`
/// table (one record per device, under the keyed hash of the address) stays: a keyed hash
/// cannot be turned back into its address, so its rows are folded into `trust_users` when
/// their user is first looked up (`SQLiteProtocolStore.legacyTrustRecord`), probing the device
/// ids the store has sessions with and the ids 0 … 64, and deleted once folded.
enum SchemaVersion3 {
    /// Creates schema 3's table.
    @Sendable
    static func apply(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE trust_users (
                user_hash BLOB PRIMARY KEY NOT NULL CHECK (length(user_hash) = 32),
                sealed BLOB NOT NULL
            ) WITHOUT ROWID;
            """)
    }
}
