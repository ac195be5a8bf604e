import Foundation
import GRDB
@_spi(Storage) import SessionKit
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

    /// The first generation of a state stored where `name`'s earlier state was deleted (1 when
    /// none was), inside the caller's transaction.
    static func firstGeneration(for name: [UInt8], db: Database) throws -> UInt64 {
        let retired = try Int64.fetchOne(db, sql: "SELECT generation FROM retired_generations WHERE name = ?", arguments: [Data(name)])
        return UInt64(max(retired ?? 0, 0)) + 1
    }

    /// A stored generation column read back (none stored: 0).
    /// - Throws: `SQLiteStoreError.invalidValue` for a negative value (written by something else).
    static func storedGeneration(_ value: Int64?, table: SealedTable) throws -> UInt64 {
        guard let value else { return 0 }
        guard value >= 1 else { throw SQLiteStoreError.invalidValue(table: table.name) }
        return UInt64(value)
    }

    /// The `generation` column of a stored state's row (at least 1).
    /// - Throws: `SQLiteStoreError.invalidValue` for a missing or non-positive value.
    static func rowGeneration(_ row: Row, table: SealedTable) throws -> UInt64 {
        try storedGeneration((row["generation"] as Int64?) ?? 0, table: table)
    }

    /// A generation as the column stores it (generations stay far below 2^63).
    static func column(_ generation: UInt64) -> Int64 { Int64(clamping: generation) }

    /// Records that the state stored under `name` at `generation` is deleted, inside the
    /// caller's transaction.
    static func retire(_ name: [UInt8], generation: UInt64, db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO retired_generations (name, generation) VALUES (?, ?)",
                       arguments: [Data(name), Int64(clamping: generation)])
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
    /// closure) unchanged, a sealed value of a SessionKit state that does not open or decode as
    /// `.damagedState` naming the state, the store's other errors as `.storage`.
    static func sessionError(_ error: any Error) -> SessionError {
        if let error = error as? SessionError { return error }
        let storeError = storeError(error)
        switch storeError {
        case let .damagedValue(table), let .invalidValue(table):
            if let kind = storedStateKind(ofTable: table) { return .damagedState(kind) }
        default: break
        }
        return .storage("SessionKitSQLite: \(storeError)")
    }

    /// The SessionKit state a sealed table holds, for `SessionError.damagedState`.
    static func storedStateKind(ofTable table: String) -> StoredStateKind? {
        switch table {
        case SealedTable.identity.name: return .identity
        case SealedTable.preKeys.name: return .preKeys
        case SealedTable.trust.name, SealedTable.trustUsers.name: return .trust
        case SealedTable.sessions.name, SealedTable.sessionOrders.name, SealedTable.sessionStates.name,
             SealedTable.skippedKeys.name:
            return .session
        case SealedTable.sendingChains.name: return .senderKeySendingChain
        case SealedTable.receiverStates.name: return .senderKeyReceiverState
        case SealedTable.groupMembers.name, SealedTable.pendingGroupMessages.name: return .groupMembers
        default: return nil
        }
    }

    /// The `VerificationError` a `TrustStore` method throws: its own errors unchanged, the
    /// store's as `.storage`.
    static func verificationError(_ error: any Error) -> VerificationError {
        if let error = error as? VerificationError { return error }
        return .storage("SessionKitSQLite: \(storeError(error))")
    }
}
