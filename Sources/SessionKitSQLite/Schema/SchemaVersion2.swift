import GRDB

/// Schema 2: sessions and sender keys, stored in parts so that persisting one message writes
/// a few hundred bytes whatever the device holds (previous sessions, skipped keys).
///
///     sessions        (id INTEGER PK AUTOINCREMENT,        one row per peer device; its value:
///                      user_hash, device_id (clear),       the current session without skipped
///                      generation (clear), sealed,         keys, and the post-quantum pin
///                      UNIQUE (user_hash, device_id))      (`SessionRecordLayout`)
///     session_orders  (record_id PK, sealed)               the previous sessions' state keys, most
///                                                          recent first (only when there are some)
///     session_states  (record_id, state_key, sealed,       a previous session without skipped keys
///                      PK (record_id, state_key))
///     skipped_keys    (record_id, state_key, slot_hash,    one skipped message key: its slot and
///                      seq (clear: age order), sealed,     key
///                      PK (record_id, state_key, slot_hash))
///     sending_chains  (group_hash PK, generation, sealed)  SenderKeySendingChain.serialized()
///     receiver_states (group_hash, sender_hash,            SenderKeyReceiverState.serialized()
///                      generation, sealed, PK (both))
///     retired_generations (name PK, generation)            the last generation of a deleted record
///                                                          or receiver state (name: its row key), so
///                                                          that a new one starts above it
///
/// `sessions` is a rowid table updated in place, so a message that advances the current session
/// rewrites one small row (one page). The generation is in clear: it is the compare-and-swap
/// counter, and shows only how many writes a record had. `state_key` and `slot_hash` are keyed
/// hashes. Every sealed value's row key binds it to its user hash and device id (and its state
/// key and slot hash), so a value moved to another row does not open.
enum SchemaVersion2 {
    /// Creates schema 2's tables.
    @Sendable
    static func apply(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE sessions (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                user_hash BLOB NOT NULL CHECK (length(user_hash) = 32),
                device_id INTEGER NOT NULL CHECK (device_id BETWEEN 0 AND 4294967295),
                generation INTEGER NOT NULL CHECK (generation >= 1),
                sealed BLOB NOT NULL,
                UNIQUE (user_hash, device_id)
            );
            CREATE TABLE session_orders (
                record_id INTEGER PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                sealed BLOB NOT NULL
            );
            CREATE TABLE session_states (
                record_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                state_key BLOB NOT NULL CHECK (length(state_key) = 32),
                sealed BLOB NOT NULL,
                PRIMARY KEY (record_id, state_key)
            );
            CREATE TABLE skipped_keys (
                record_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                state_key BLOB NOT NULL CHECK (length(state_key) = 32),
                slot_hash BLOB NOT NULL CHECK (length(slot_hash) = 32),
                seq INTEGER NOT NULL,
                sealed BLOB NOT NULL,
                PRIMARY KEY (record_id, state_key, slot_hash)
            );
            CREATE INDEX skipped_keys_by_age ON skipped_keys (record_id, seq);
            CREATE TABLE sending_chains (
                group_hash BLOB PRIMARY KEY NOT NULL CHECK (length(group_hash) = 32),
                generation INTEGER NOT NULL CHECK (generation >= 1),
                sealed BLOB NOT NULL
            );
            CREATE TABLE retired_generations (
                name BLOB PRIMARY KEY NOT NULL,
                generation INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE receiver_states (
                group_hash BLOB NOT NULL CHECK (length(group_hash) = 32),
                sender_hash BLOB NOT NULL CHECK (length(sender_hash) = 32),
                generation INTEGER NOT NULL CHECK (generation >= 1),
                sealed BLOB NOT NULL,
                PRIMARY KEY (group_hash, sender_hash)
            );
            """)
    }
}
