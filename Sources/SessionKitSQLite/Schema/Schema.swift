import GRDB

/// The store's schema versions and the steps between them.
///
/// The version is SQLite's `PRAGMA user_version`; `PRAGMA application_id` marks the file as a
/// store of this library. Opening a file runs, in the same IMMEDIATE transaction that checks
/// the key, every step from the file's version up to `currentVersion`, then sets
/// `user_version`: an older file is migrated completely or not at all, and two processes
/// opening the same file at once migrate it once. A file whose version is above
/// `currentVersion` (written by a newer library) is refused with
/// `SQLiteStoreError.newerSchema` and left untouched.
///
/// Adding a schema (as `SchemaVersion2` added sessions and sender keys): write its `apply(_:)`
/// (its tables, and the re-sealing of any table whose value layout changes, with that table's
/// new `SealedTable.valueVersion`: a step that must open sealed values runs from
/// `migrateValues(_:from:sealer:)`, once the key is checked, as `SchemaVersion5` does), append
/// it to `steps`, commit a fixture written by the previous schema next to the others, and keep
/// the test that opens every fixture passing.
enum Schema {
    /// `PRAGMA application_id` of a store file: "SKSQ".
    static let applicationID: Int32 = 0x534B_5351

    /// The steps, in order: `steps[n - 1]` turns a file at version `n - 1` into version `n`.
    static let steps: [@Sendable (Database) throws -> Void] = [
        SchemaVersion1.apply,
        SchemaVersion2.apply,
        SchemaVersion3.apply,
        SchemaVersion4.apply,
        SchemaVersion5.apply,
        SchemaRegistrationID.apply,
        SchemaStoreEpoch.apply,
        SchemaSendLog.apply,
        SchemaGenerationBinding.apply,
        SchemaKnownIDs.apply,
        SchemaSendLogPeers.apply,
    ]

    /// The newest schema this library reads and writes.
    static var currentVersion: Int { steps.count }

    /// The schema version of the file, after checking that it is a store (or a new, empty
    /// file: version 0) this library can open. Changes nothing.
    /// - Throws: `SQLiteStoreError.newerSchema` for a file from a newer library,
    ///   `.notAStore` for another application's database, and database errors (`SQLITE_NOTADB`
    ///   for a file that is not a database).
    @discardableResult
    static func check(_ db: Database, path: String) throws -> Int {
        let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        // A new file has no table yet; anything else without the application id belongs to
        // someone else (only counted then).
        var objects = 0
        if applicationID != Self.applicationID { objects = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0 }
        return try validate(applicationID: applicationID, version: version, objectCount: objects, path: path)
    }

    /// The schema version of a file whose `PRAGMA application_id`, `PRAGMA user_version` and
    /// number of `sqlite_master` objects are these, after checking, as `check(_:path:)` does,
    /// that it is a store (or a new, empty file) this library can open.
    /// - Throws: `SQLiteStoreError.newerSchema` or `.notAStore`.
    static func validate(applicationID: Int32, version: Int, objectCount: Int, path: String) throws(SQLiteStoreError) -> Int {
        if applicationID != Self.applicationID {
            guard objectCount == 0, version == 0 else { throw .notAStore(path: path) }
        }
        guard version <= currentVersion else { throw .newerSchema(found: version, supported: currentVersion) }
        guard version >= 0 else { throw .notAStore(path: path) }
        return version
    }

    /// Brings the file up to `currentVersion` inside the caller's transaction, and returns the
    /// version it had (0 for a new file).
    /// - Throws: `SQLiteStoreError.newerSchema` for a file from a newer library,
    ///   `.notAStore` for another application's database, and database errors.
    @discardableResult
    static func migrate(_ db: Database, path: String) throws -> Int {
        let version = try check(db, path: path)
        guard version < currentVersion else { return version }
        for step in steps[version...] { try step(db) }
        try db.execute(sql: "PRAGMA application_id = \(Self.applicationID)")
        try db.execute(sql: "PRAGMA user_version = \(currentVersion)")
        return version
    }

    /// The steps that move sealed values (they need the file's keys), for a file that was at
    /// `version` before `migrate(_:path:)`, inside the same transaction once the storage key is
    /// checked: schema 5 moves the replay records out of the prekeys blob, schema 9 re-seals the
    /// values of the rows with a generation for it.
    static func migrateValues(_ db: Database, from version: Int, sealer: ValueSealer) throws {
        if version >= 1, version < SchemaVersion5.version { try SchemaVersion5.moveReplayRecords(db, sealer: sealer) }
        if version >= 2, version < SchemaGenerationBinding.version { try SchemaGenerationBinding.resealValues(db, sealer: sealer) }
    }
}
