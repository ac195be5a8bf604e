import GRDB

/// The schema step that adds the send log (SPEC §9; issue 19):
///
///     send_log (id PK AUTOINCREMENT, chain_hash,    a message this device sent
///               expires_at (clear), sealed)        (`SendLogValueCoding`)
///
/// `chain_hash` is the keyed hash of the chain's identifying bytes (`SendLogChain
/// .identifyingBytes`, `RowKeyDomain.sendLogChain`: recipient device and ratchet key, or group
/// and chain id), so the file does not show whom a message went to. The value is sealed for
/// `chain_hash || i64(id) || i64(expires_at)`, so a value moved to another row, or an expiry
/// pushed back, fails to open. The expiry is in clear so that expired entries go with one
/// indexed statement; it shows when each message was sent (to the second) and how many went on
/// each (unnamed) chain. Entries are deleted with `secure_delete` (on for every connection).
///
/// The name says what the step does rather than its number: `Schema.steps` gives its number
/// (`SealedTable.sendLog.valueVersion` must equal it).
enum SchemaSendLog {
    /// Creates the `send_log` table and its indexes.
    @Sendable
    static func apply(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE send_log (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                chain_hash BLOB NOT NULL CHECK (length(chain_hash) = 32),
                expires_at INTEGER NOT NULL,
                sealed BLOB NOT NULL
            );
            CREATE INDEX send_log_by_chain ON send_log (chain_hash, id);
            CREATE INDEX send_log_by_expiry ON send_log (expires_at);
            """)
    }
}
