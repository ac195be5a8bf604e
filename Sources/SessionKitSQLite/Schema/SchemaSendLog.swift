import GRDB

/// The schema step that adds the send log (SPEC §9; issue 19):
///
///     send_log (id INTEGER PK, chain_hash,     a message this device sent
///               expires_at (clear), sealed)    (`SendLogValueCoding`)
///
/// `chain_hash` is the keyed hash of the chain's identifying bytes (`SendLogChain
/// .identifyingBytes`, `RowKeyDomain.sendLogChain`: recipient device and ratchet key, or group
/// and chain id), so the file does not show whom a message went to. The value is sealed for
/// `chain_hash || i64(id) || i64(expires_at)`, so a value moved to another row, or an expiry
/// pushed back, fails to open. The expiry is in clear so that expired entries can be found
/// without the key; it shows when each message was sent (to the second) and how many went on
/// each (unnamed) chain. Entries are deleted with `secure_delete` (on for every connection).
///
/// No index besides the id: a message sent appends one row at the end of the table (one leaf
/// page, as few pages written per message as the log allows). Entries are logged in time
/// order, so the expired ones are the oldest ids and go a few at a time from the start of the
/// table; the count bound is a range on the id. Reading or removing one chain's entries scans
/// the table (at most `SendLogPolicy.maximumEntries` rows, without opening a value), which
/// happens only when a retry notice is acted on (at most once an hour per peer device) or the
/// app takes the messages of an archived session.
///
/// The name says what the step does rather than its number: `Schema.steps` gives its number
/// (`SealedTable.sendLog.valueVersion` must equal it).
enum SchemaSendLog {
    /// Creates the `send_log` table.
    @Sendable
    static func apply(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE send_log (
                id INTEGER PRIMARY KEY NOT NULL,
                chain_hash BLOB NOT NULL CHECK (length(chain_hash) = 32),
                expires_at INTEGER NOT NULL,
                sealed BLOB NOT NULL
            );
            """)
    }
}
