import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// The prekeys are one sealed `LocalPreKeys.serialized()` blob in the one-row table `prekeys`.
extension SQLiteProtocolStore: PreKeyStore {
    /// The prekeys, or `nil` when none were stored yet.
    /// - Throws: `SessionError.storage` when the file fails or the blob is damaged,
    ///   `.invalidPayload` / `.unsupportedVersion` when it opens but does not load.
    public func loadPreKeys() async throws(SessionError) -> LocalPreKeys? {
        do {
            return try await readTransaction { [sealer] db in try Self.readPreKeys(db, sealer: sealer) }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Runs `update` on the stored prekeys inside one write transaction and stores what it
    /// leaves (deleting the row when it leaves `nil`). When `update` throws, the transaction
    /// rolls back, nothing is stored and its error is rethrown.
    /// - Throws: the error of `update`; `SessionError.storage` when the file fails or the blob is
    ///   damaged (then nothing changed).
    public func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        do {
            return try await writeTransaction { [sealer] db in
                var keys = try Self.readPreKeys(db, sealer: sealer)
                let result = try update(&keys)
                if let keys {
                    try Self.writePreKeys(keys, db: db, sealer: sealer)
                } else {
                    try db.execute(sql: "DELETE FROM prekeys WHERE id = 1")
                }
                return result
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Stores `keys`, inside the caller's transaction.
    static func writePreKeys(_ keys: LocalPreKeys, db: Database, sealer: ValueSealer) throws {
        var bytes = keys.serialized()
        defer { SecureMemory.zero(&bytes) }
        let sealed = try sealer.seal(bytes, table: .preKeys, rowKey: singleRowKey)
        try db.execute(sql: "INSERT OR REPLACE INTO prekeys (id, sealed) VALUES (1, ?)", arguments: [Data(sealed)])
    }

    /// The stored prekeys, or `nil`, inside the caller's transaction.
    static func readPreKeys(_ db: Database, sealer: ValueSealer) throws -> LocalPreKeys? {
        guard let value = try DatabaseValue.fetchOne(db, sql: "SELECT sealed FROM prekeys WHERE id = 1") else { return nil }
        let opened = try sealer.open(try blob(value, table: .preKeys), table: .preKeys, rowKey: singleRowKey)
        var bytes = opened.bytes
        defer { SecureMemory.zero(&bytes) }
        return try LocalPreKeys(serialized: bytes)
    }
}
