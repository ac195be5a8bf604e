import GRDB

/// The schema step that binds every send-log entry to its recipient's identity key (SPEC §9 as
/// amended after the third review: a logged message is re-sent only into a session under the
/// key it was first sent under, and accepting a new key for a user discards the entries under
/// the old one), pads the sealed values and coarsens the clear expiry:
///
///     send_log (id INTEGER PK, chain_hash, expires_at (clear, rounded up to the hour),
///               user_hash, peer_hash, sealed)     (`SendLogValueCoding`)
///
/// `user_hash` and `peer_hash` are keyed hashes (`RowKeyDomain.sendLogUser`, `.sendLogPeer`)
/// of a pairwise entry's recipient user and of that user with the identity key the message
/// was sent under (NULL for a group entry), so that a key acceptance removes the user's
/// entries under other keys with one statement, without opening a value. The value holds
/// the key itself (checked when the entry is handed back), the exact expiry and the plaintext,
/// padded (`SendLogValueCoding.paddedLength`) so the file no longer shows a message's exact
/// length; the clear expiry is rounded up to the hour, so it no longer shows the second a
/// message was sent.
///
/// The entries written before (value version 8) carry no identity key, so nothing can tell
/// whether they may be re-sent: the step deletes them (the log keeps a day's messages; what
/// they lose is a re-send after a retry notice).
///
/// The name says what the step does rather than its number: `Schema.steps` gives its number,
/// which `version` must equal (`SealedTable.sendLog.valueVersion` is `version`).
enum SchemaSendLogPeers {
    /// This schema's version (its place in `Schema.steps`).
    static let version = 11

    /// Deletes the unbound entries and adds the two columns.
    @Sendable
    static func apply(_ db: Database) throws {
        try db.execute(sql: """
            DELETE FROM send_log;
            ALTER TABLE send_log ADD COLUMN user_hash BLOB CHECK (user_hash IS NULL OR length(user_hash) = 32);
            ALTER TABLE send_log ADD COLUMN peer_hash BLOB CHECK (peer_hash IS NULL OR length(peer_hash) = 32);
            """)
    }
}
