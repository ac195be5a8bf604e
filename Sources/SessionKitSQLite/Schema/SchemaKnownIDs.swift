import GRDB

/// The schema step that adds the sealed table of the ids behind the keyed hashes (account
/// exports without lists; issue 20):
///
///     known_ids (id_hash PK, sealed)     the id (UTF-8) whose keyed hash is `id_hash`
///
/// `id_hash` is the row key the id is stored under elsewhere: a user id's hash in `trust_users`
/// (`RowKeyDomain.trustUser`) or a conversation id's hash in `archive`
/// (`RowKeyDomain.archiveConversation`). The value is sealed for that hash like every other
/// value (`SealedTable.knownIDs`), so the file still names no contact, and a value moved to
/// another row does not open; a reader also checks that the opened id hashes to the row's key
/// in the domain it looks for (`KnownIDs`). The rows are written with `INSERT OR IGNORE` in the
/// transaction that writes a trust record or archives a message (not in a session's commit,
/// unless it writes a trust record), and deleted with the record or the conversation's last
/// message, so `exportAccount` can name every record and conversation it exports
/// (`AccountExportContents.everything(userID:contacts:conversations:)`).
///
/// A keyed hash cannot be turned back into its id, so the step adds no row for what older
/// schemas wrote: those records and conversations stay unnamed (an export counts them as
/// unlisted) until the app names them in an export's lists, or writes to them again (a trust
/// write for the user, a message archived in the conversation), which records their id.
///
/// The name says what the step does rather than its number: `Schema.steps` gives its number,
/// which `version` must equal (`SealedTable.knownIDs.valueVersion` is `version`).
enum SchemaKnownIDs {
    /// This schema's version (its place in `Schema.steps`).
    static let version = 10

    /// Creates the `known_ids` table.
    @Sendable
    static func apply(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE known_ids (
                id_hash BLOB PRIMARY KEY NOT NULL CHECK (length(id_hash) = 32),
                sealed BLOB NOT NULL
            ) WITHOUT ROWID;
            """)
    }
}
