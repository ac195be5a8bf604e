import GRDB

/// The shape of the tables that hold one sealed value for the whole file (`store_epoch`,
/// `registration`): one row, id 1, and the value sealed under the table's subkey with row key 1.
///
///     <name> (id = 1 PK, sealed)
///
/// The statement is the one those steps always ran (files record it in `sqlite_master`).
enum SchemaOneRowSealedTable {
    /// Creates the one-row table `name` (a fixed identifier of the schema, never user input).
    static func create(_ name: String, in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE \(name) (
                id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                sealed BLOB NOT NULL
            );
            """)
    }
}
