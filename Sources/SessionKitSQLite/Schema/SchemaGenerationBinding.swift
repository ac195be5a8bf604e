import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// Schema 9: the values of the rows that carry a generation (`sessions`, `sending_chains`,
/// `receiver_states`) are sealed for the row's generation too (`ValueSealer.rowKey(_:generation:)`,
/// value version 9).
///
/// A row's generation is the compare-and-swap that keeps a stale state from replacing a newer
/// one (`StoreCommit`). It is in clear, so that the check needs no key; before this schema, an
/// older sealed value of the same row put back under the current generation (by anyone who can
/// write the file, from an earlier copy of it) opened and loaded as if current: an old sending
/// chain, whose next message key was used already. Now such a value does not open
/// (`SessionError.damagedState`). Putting back an older row whole (its generation with it) is a
/// rolled-back file, which the store epoch detects at open (`SchemaStoreEpoch`).
///
/// The step adds no table; `resealValues(_:sealer:)` re-seals every such row under the new layout
/// in the opening transaction once the key is checked. A value that does not open is left as it
/// is (the store reports it as damaged, as before the migration).
enum SchemaGenerationBinding {
    /// This schema's version (its place in `Schema.steps`).
    static let version = 9

    /// Nothing to create: the values change, in `resealValues(_:sealer:)`.
    @Sendable
    static func apply(_ db: Database) throws {}

    /// Re-seals the values of `sessions`, `sending_chains` and `receiver_states` for their
    /// row's generation, inside the caller's (opening) transaction.
    static func resealValues(_ db: Database, sealer: ValueSealer) throws {
        for row in try Row.fetchAll(db, sql: "SELECT id, user_hash, device_id, generation, sealed FROM sessions") {
            var rowKey = [UInt8](row["user_hash"] as Data)
            rowKey.appendBigEndian(UInt32(truncatingIfNeeded: row["device_id"] as Int64))
            guard let sealed = try reseal(row, rowKey: rowKey, from: .sessionsBeforeSchema9, to: .sessions, sealer: sealer) else { continue }
            try db.execute(sql: "UPDATE sessions SET sealed = ? WHERE id = ?", arguments: [sealed, row["id"] as Int64])
        }
        for row in try Row.fetchAll(db, sql: "SELECT group_hash, generation, sealed FROM sending_chains") {
            let groupHash = [UInt8](row["group_hash"] as Data)
            guard let sealed = try reseal(row, rowKey: groupHash, from: .sendingChainsBeforeSchema9, to: .sendingChains, sealer: sealer) else {
                continue
            }
            try db.execute(sql: "UPDATE sending_chains SET sealed = ? WHERE group_hash = ?", arguments: [sealed, Data(groupHash)])
        }
        for row in try Row.fetchAll(db, sql: "SELECT group_hash, sender_hash, generation, sealed FROM receiver_states") {
            let (groupHash, senderHash) = ([UInt8](row["group_hash"] as Data), [UInt8](row["sender_hash"] as Data))
            guard let sealed = try reseal(
                row, rowKey: groupHash + senderHash, from: .receiverStatesBeforeSchema9, to: .receiverStates, sealer: sealer) else { continue }
            try db.execute(sql: "UPDATE receiver_states SET sealed = ? WHERE group_hash = ? AND sender_hash = ?",
                           arguments: [sealed, Data(groupHash), Data(senderHash)])
        }
    }

    /// The value of `row` opened under the old layout and sealed under the new one, or `nil`
    /// when it does not open.
    private static func reseal(_ row: Row, rowKey: [UInt8], from old: SealedTable, to new: SealedTable, sealer: ValueSealer) throws -> Data? {
        guard case let .blob(data) = (row["sealed"] as DatabaseValue).storage,
              let opened = try? sealer.open([UInt8](data), table: old, rowKey: rowKey) else { return nil }
        let generation = UInt64(clamping: max(0, (row["generation"] as Int64?) ?? 0))
        return Data(try sealer.seal(opened, table: new, rowKey: ValueSealer.rowKey(rowKey, generation: generation)))
    }
}
