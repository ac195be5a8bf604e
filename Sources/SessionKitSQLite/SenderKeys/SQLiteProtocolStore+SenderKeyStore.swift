import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// Sender-key chains: our sending chain per group in `sending_chains`, the chains received from
/// each sender in `receiver_states`, each one sealed blob under keyed hashes of the group (and
/// the sender's address), with its generation in clear for the compare-and-swap of `commit`.
extension SQLiteProtocolStore: SenderKeyStore {
    /// Our sending chain for `group`, or `nil`, with its stored generation.
    /// - Throws: `SessionError.storage` naming the table when the file fails or the value is
    ///   damaged; `.invalidPayload` / `.unsupportedVersion` when it opens but does not load.
    public func loadSendingChain(for group: GroupID) async throws(SessionError) -> SenderKeySendingChain? {
        let groupHash = sealer.rowKey(group.rawRepresentation, in: .senderKeyGroup)
        do {
            return try await readTransaction { [sealer] db -> SenderKeySendingChain? in
                guard let row = try Row.fetchOne(db, sql: "SELECT generation, sealed FROM sending_chains WHERE group_hash = ?",
                                                 arguments: [Data(groupHash)]) else { return nil }
                let generation = try Self.rowGeneration(row, table: .sendingChains)
                var bytes = try sealer.open(
                    try Self.blob(row["sealed"], table: .sendingChains), table: .sendingChains,
                    rowKey: ValueSealer.rowKey(groupHash, generation: generation)).bytes
                defer { SecureMemory.zero(&bytes) }
                var chain = try SenderKeySendingChain(serialized: bytes)
                chain.generation = generation
                return chain
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// The chains received from `sender` in `group`, or `nil`, with their stored generation.
    /// - Throws: as `loadSendingChain(for:)`.
    public func loadReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> SenderKeyReceiverState? {
        let (groupHash, senderHash) = Self.receiverNames(group, sender, sealer: sealer)
        do {
            return try await readTransaction { [sealer] db -> SenderKeyReceiverState? in
                guard let row = try Row.fetchOne(
                    db, sql: "SELECT generation, sealed FROM receiver_states WHERE group_hash = ? AND sender_hash = ?",
                    arguments: [Data(groupHash), Data(senderHash)]) else { return nil }
                let generation = try Self.rowGeneration(row, table: .receiverStates)
                var bytes = try sealer.open(
                    try Self.blob(row["sealed"], table: .receiverStates), table: .receiverStates,
                    rowKey: ValueSealer.rowKey(groupHash + senderHash, generation: generation)).bytes
                defer { SecureMemory.zero(&bytes) }
                var state = try SenderKeyReceiverState(serialized: bytes)
                state.generation = generation
                return state
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Forgets the chains received from `sender` in `group`.
    /// - Throws: `SessionError.storage` when the file fails.
    public func removeReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) {
        let (groupHash, senderHash) = Self.receiverNames(group, sender, sealer: sealer)
        do {
            try await writeTransaction { [sealer] db in
                let stored = try Int64.fetchOne(
                    db, sql: "SELECT generation FROM receiver_states WHERE group_hash = ? AND sender_hash = ?",
                    arguments: [Data(groupHash), Data(senderHash)])
                guard let stored else { return }
                try db.execute(sql: "DELETE FROM receiver_states WHERE group_hash = ? AND sender_hash = ?",
                               arguments: [Data(groupHash), Data(senderHash)])
                try Self.indexReceiverChains([], owner: groupHash + senderHash, db: db, sealer: sealer)
                try Self.retire(groupHash + senderHash, generation: try Self.storedGeneration(stored, table: .receiverStates), db: db)
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    // MARK: Writing (inside `commit`'s transaction)

    /// Writes our sending chain after comparing generations.
    static func write(_ write: StoreCommit.SendingChainWrite, db: Database, sealer: ValueSealer) throws {
        let groupHash = sealer.rowKey(write.group.rawRepresentation, in: .senderKeyGroup)
        let stored = try Int64.fetchOne(db, sql: "SELECT generation FROM sending_chains WHERE group_hash = ?", arguments: [Data(groupHash)])
        guard try storedGeneration(stored, table: .sendingChains) == write.chain.generation else { throw SessionError.staleState }
        var bytes = write.chain.serialized()
        defer { SecureMemory.zero(&bytes) }
        let sealed = try sealer.seal(bytes, table: .sendingChains, rowKey: ValueSealer.rowKey(groupHash, generation: write.chain.generation + 1))
        try db.execute(sql: "INSERT OR REPLACE INTO sending_chains (group_hash, generation, sealed) VALUES (?, ?, ?)",
                       arguments: [Data(groupHash), column(write.chain.generation + 1), Data(sealed)])
    }

    /// Writes the chains received from a sender after comparing generations.
    static func write(_ write: StoreCommit.ReceiverStateWrite, db: Database, sealer: ValueSealer) throws {
        let (groupHash, senderHash) = receiverNames(write.group, write.sender, sealer: sealer)
        let stored = try Int64.fetchOne(
            db, sql: "SELECT generation FROM receiver_states WHERE group_hash = ? AND sender_hash = ?",
            arguments: [Data(groupHash), Data(senderHash)])
        guard try storedGeneration(stored, table: .receiverStates) == write.state.generation else { throw SessionError.staleState }
        let generation = stored == nil ? try firstGeneration(for: groupHash + senderHash, db: db) : write.state.generation + 1
        var bytes = write.state.serialized()
        defer { SecureMemory.zero(&bytes) }
        let sealed = try sealer.seal(bytes, table: .receiverStates, rowKey: ValueSealer.rowKey(groupHash + senderHash, generation: generation))
        try db.execute(
            sql: "INSERT OR REPLACE INTO receiver_states (group_hash, sender_hash, generation, sealed) VALUES (?, ?, ?, ?)",
            arguments: [Data(groupHash), Data(senderHash), column(generation), Data(sealed)])
        try indexReceiverChains(write.state.chainIDs.map(\.rawRepresentation), owner: groupHash + senderHash, db: db, sealer: sealer)
    }

    // MARK: Support

    /// The keyed hashes naming the chains received from `sender` in `group`.
    private static func receiverNames(_ group: GroupID, _ sender: ProtocolAddress, sealer: ValueSealer) -> ([UInt8], [UInt8]) {
        (sealer.rowKey(group.rawRepresentation, in: .senderKeyGroup), sealer.rowKey(sender.encoded, in: .senderKeySender))
    }
}
