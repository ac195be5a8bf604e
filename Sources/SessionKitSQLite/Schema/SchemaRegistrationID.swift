import GRDB

/// The schema step that adds the installation's registration id (SPEC §9; issue 19).
///
///     registration (id = 1 PK, sealed)     u32(registration id), big-endian, 1 … 2^31 − 1
///
/// The step creates the table; the opening transaction that runs it (the same IMMEDIATE
/// transaction, `SQLiteProtocolStore.init`) then finds no row and draws the id
/// (`RegistrationID.random()`), sealed like every other value (the table's subkey, row key 1).
/// So a file of an older schema gains its id in the same transaction that migrates it, exactly
/// as a new file does, and keeps it from then on. The id is sealed although the server knows it:
/// in clear it would tie the file to the account without the storage key.
///
/// The name says what the step does rather than its number: `Schema.steps` gives its number
/// (`SealedTable.registration.valueVersion` must equal it).
enum SchemaRegistrationID {
    /// Creates the `registration` table.
    @Sendable
    static func apply(_ db: Database) throws {
        try SchemaOneRowSealedTable.create("registration", in: db)
    }
}
