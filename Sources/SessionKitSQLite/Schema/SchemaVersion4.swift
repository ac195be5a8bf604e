import GRDB

/// Schema 4: group members, pending group messages, and an index of the received chains.
///
///     group_members          (group_hash PK, sealed)            a group's member devices
///                                                               (`GroupMembersCoding`)
///     pending_group_messages (id PK AUTOINCREMENT, owner_hash,  a group message waiting for its
///                             expires_at (clear), sealed)       distribution (the message bytes)
///     receiver_chains        (chain_hash PK, owner_hash)        the chain ids of `receiver_states`
///
/// `owner_hash` is the receiver state's name: the keyed hashes of the group and of the sender's
/// address, concatenated (64 bytes). `chain_hash` is the keyed hash of a chain id. The expiry is
/// in clear so that expired messages are deleted with one indexed statement; it shows when a
/// message arrived (to the second), not from whom. Chains stored before schema 4 are indexed
/// the next time their receiver state is written.
enum SchemaVersion4 {
    /// Creates schema 4's tables.
    @Sendable
    static func apply(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE group_members (
                group_hash BLOB PRIMARY KEY NOT NULL CHECK (length(group_hash) = 32),
                sealed BLOB NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE pending_group_messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                owner_hash BLOB NOT NULL CHECK (length(owner_hash) = 64),
                expires_at INTEGER NOT NULL,
                sealed BLOB NOT NULL
            );
            CREATE INDEX pending_group_messages_by_owner ON pending_group_messages (owner_hash, id);
            CREATE INDEX pending_group_messages_by_expiry ON pending_group_messages (expires_at);
            CREATE TABLE receiver_chains (
                chain_hash BLOB PRIMARY KEY NOT NULL CHECK (length(chain_hash) = 32),
                owner_hash BLOB NOT NULL CHECK (length(owner_hash) = 64)
            ) WITHOUT ROWID;
            CREATE INDEX receiver_chains_by_owner ON receiver_chains (owner_hash);
            """)
    }
}
