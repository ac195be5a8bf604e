import GRDB

/// Schema 1: the tables below. A column is either a keyed hash (`*_hash`, 32 bytes), a value
/// sealed for its row (`sealed`, see `ValueSealer`), or in clear where the comment says so.
///
///     meta      (name TEXT PK, value BLOB)                     "fileSalt": 32 random bytes, clear
///                                                              "keyCheck": a sealed constant
///     identity  (id = 1 PK, sealed)                            IdentityKeyPair.serialized()
///     prekeys   (id = 1 PK, sealed)                            LocalPreKeys.serialized()
///     trust     (address_hash PK, sealed)                      a TrustRecord (`TrustRecordCoding`)
///     archive   (conversation_hash, message_hash) PK,          message id and plaintext
///               timestamp INTEGER (clear), sealed              (`ArchiveValueCoding`)
///     archive_by_time index on (conversation_hash, timestamp DESC, message_hash DESC)
///
/// Sessions and sender keys get their tables in a later step (schema 2), for example
/// `sessions (user_hash, device_id (clear), sealed, PK (user_hash, device_id))`.
enum SchemaVersion1 {
    /// Creates schema 1's tables.
    @Sendable
    static func apply(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE meta (
                name TEXT PRIMARY KEY NOT NULL,
                value BLOB NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE identity (
                id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                sealed BLOB NOT NULL
            );
            CREATE TABLE prekeys (
                id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                sealed BLOB NOT NULL
            );
            CREATE TABLE trust (
                address_hash BLOB PRIMARY KEY NOT NULL CHECK (length(address_hash) = 32),
                sealed BLOB NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE archive (
                conversation_hash BLOB NOT NULL CHECK (length(conversation_hash) = 32),
                message_hash BLOB NOT NULL CHECK (length(message_hash) = 32),
                timestamp INTEGER NOT NULL,
                sealed BLOB NOT NULL,
                PRIMARY KEY (conversation_hash, message_hash)
            ) WITHOUT ROWID;
            CREATE INDEX archive_by_time ON archive (conversation_hash, timestamp DESC, message_hash DESC);
            """)
    }
}
