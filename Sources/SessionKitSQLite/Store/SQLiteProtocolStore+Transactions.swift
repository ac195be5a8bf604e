import GRDB
import SessionKit
import Verification

/// The internal hooks every table of the store is built on: one transaction per operation, and
/// errors mapped to each API's error type.
///
/// A new table (sessions, sender keys) uses them like the prekeys do:
///
///     try await writeTransaction { db in
///         let row = sealer.rowKey(Array(address.userID.utf8), in: .sessionUser)   // hashed id
///         let sealed = try sealer.seal(blob, table: .sessions, rowKey: row + deviceIDBytes)
///         try db.execute(sql: "INSERT OR REPLACE INTO sessions ...", arguments: [...])
///     }
///
/// and maps what it throws with `sessionError(_:)` in a SessionKit protocol method.
extension SQLiteProtocolStore {
    /// Runs `body` in one write transaction (IMMEDIATE: it holds the file's write lock from the
    /// start, so a read-modify-write in it is atomic, also against other processes). When
    /// `body` throws, the transaction rolls back and its error is rethrown unchanged; SQLite's
    /// own errors arrive as `SQLiteStoreError.database`.
    func writeTransaction<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(body)
        } catch let error as DatabaseError {
            throw Self.storeError(error)
        }
    }

    /// Runs `body` in one read transaction (a consistent snapshot; WAL readers do not wait for
    /// the writer). Errors as in `writeTransaction`.
    func readTransaction<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let error as DatabaseError {
            throw Self.storeError(error)
        }
    }

    /// Runs `body`, one statement, on a reader connection without an explicit transaction (a
    /// single statement is atomic by itself); cheaper than `readTransaction` for the check that
    /// a cached state is still the stored one. Errors as in `writeTransaction`.
    func singleStatementRead<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.unsafeRead(body)
        } catch let error as DatabaseError {
            throw Self.storeError(error)
        }
    }

    /// The store's error for anything thrown inside the store.
    static func storeError(_ error: any Error) -> SQLiteStoreError {
        switch error {
        case let error as SQLiteStoreError: return error
        case let error as DatabaseError:
            // SQLite's message and code only: GRDB's description can include the SQL.
            return .database("SQLite error \(error.extendedResultCode.rawValue): \(error.message ?? "no message")")
        case is CancellationError: return .database("the task was cancelled before the transaction ran")
        case is ValueDecodingError: return .database("a value does not decode")
        default: return .database(String(describing: type(of: error)))
        }
    }

    /// The `SessionError` a SessionKit protocol method throws: its own errors (from an update
    /// closure or a stored blob that does not load) unchanged, the store's as `.storage`.
    static func sessionError(_ error: any Error) -> SessionError {
        if let error = error as? SessionError { return error }
        return .storage("SessionKitSQLite: \(storeError(error))")
    }

    /// The `VerificationError` a `TrustStore` method throws: its own errors unchanged, the
    /// store's as `.storage`.
    static func verificationError(_ error: any Error) -> VerificationError {
        if let error = error as? VerificationError { return error }
        return .storage("SessionKitSQLite: \(storeError(error))")
    }
}
