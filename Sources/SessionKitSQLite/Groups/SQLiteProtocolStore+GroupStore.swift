import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// Groups besides their chains (schema 4, `SchemaVersion4`): each group's member devices in
/// `group_members` (one sealed list per group), the group messages waiting for their
/// distribution in `pending_group_messages` (each sealed for its id), and the index of the
/// received chains' ids in `receiver_chains` (keyed hashes only).
extension SQLiteProtocolStore: GroupStore {
    /// The member devices of `group` (empty when none were set).
    /// - Throws: `SessionError.storage` naming the table when the file fails or the value is
    ///   damaged; `.invalidPayload` when it opens but does not decode.
    public func loadGroupMembers(for group: GroupID) async throws(SessionError) -> Set<ProtocolAddress> {
        let groupHash = sealer.rowKey(group.rawRepresentation, in: .groupMembers)
        do {
            return try await readTransaction { [sealer] db -> Set<ProtocolAddress> in
                guard let value = try DatabaseValue.fetchOne(
                    db, sql: "SELECT sealed FROM group_members WHERE group_hash = ?", arguments: [Data(groupHash)]) else { return [] }
                let opened = try sealer.open(try Self.blob(value, table: .groupMembers), table: .groupMembers, rowKey: groupHash)
                return try GroupMembersCoding.decode(opened.bytes).members
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// The join points of `group`'s members in our sending chain (SPEC §9; none when none were
    /// set, or the row was written before join points were kept).
    /// - Throws: as `loadGroupMembers(for:)`.
    public func loadGroupJoinPoints(for group: GroupID) async throws(SessionError) -> [ProtocolAddress: GroupJoinPoint] {
        let groupHash = sealer.rowKey(group.rawRepresentation, in: .groupMembers)
        do {
            return try await readTransaction { [sealer] db -> [ProtocolAddress: GroupJoinPoint] in
                guard let value = try DatabaseValue.fetchOne(
                    db, sql: "SELECT sealed FROM group_members WHERE group_hash = ?", arguments: [Data(groupHash)]) else { return [:] }
                let opened = try sealer.open(try Self.blob(value, table: .groupMembers), table: .groupMembers, rowKey: groupHash)
                return try GroupMembersCoding.decode(opened.bytes).joinPoints
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// The messages from `sender` in `group` waiting for a distribution, oldest first.
    /// - Throws: as `loadGroupMembers(for:)`.
    public func loadPendingGroupMessages(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> [PendingGroupMessage] {
        let owner = Self.receiverOwner(group, sender, sealer: sealer)
        do {
            return try await readTransaction { [sealer] db -> [PendingGroupMessage] in
                try Row.fetchAll(
                    db, sql: "SELECT id, expires_at, sealed FROM pending_group_messages WHERE owner_hash = ? ORDER BY id",
                    arguments: [Data(owner)]
                ).map { row in
                    let id: Int64 = row["id"]
                    let sealed = try Self.blob(row["sealed"], table: .pendingGroupMessages)
                    let opened = try sealer.open(sealed, table: .pendingGroupMessages, rowKey: owner + Self.idBytes(id))
                    return PendingGroupMessage(
                        id: UInt64(id), group: group, sender: sender, message: opened.bytes,
                        expiresAt: Timestamp(secondsSince1970: row["expires_at"]))
                }
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    /// Whether any received chain has the id `chainID` (one indexed look-up).
    /// - Throws: `SessionError.storage` when the file fails.
    public func holdsReceiverChain(_ chainID: [UInt8]) async throws(SessionError) -> Bool {
        let chainHash = sealer.rowKey(chainID, in: .receiverChain)
        do {
            return try await readTransaction { db in
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM receiver_chains WHERE chain_hash = ?)",
                                  arguments: [Data(chainHash)]) ?? false
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    // MARK: Writing (inside `commit`'s transaction)

    /// The group writes of `commit`: members, expired and released pending messages, a new one.
    static func writeGroupState(of commit: StoreCommit, db: Database, sealer: ValueSealer) throws {
        if let write = commit.groupMembers {
            let groupHash = sealer.rowKey(write.group.rawRepresentation, in: .groupMembers)
            if write.members.isEmpty {
                try db.execute(sql: "DELETE FROM group_members WHERE group_hash = ?", arguments: [Data(groupHash)])
            } else {
                let sealed = try sealer.seal(
                    GroupMembersCoding.encode(write.members, joinPoints: write.joinPoints), table: .groupMembers, rowKey: groupHash)
                try db.execute(sql: "INSERT OR REPLACE INTO group_members (group_hash, sealed) VALUES (?, ?)",
                               arguments: [Data(groupHash), Data(sealed)])
            }
        }
        if let expiry = commit.expiringPendingGroupMessages {
            try db.execute(sql: "DELETE FROM pending_group_messages WHERE expires_at <= ?", arguments: [expiry.secondsSince1970])
        }
        for id in commit.releasedPendingGroupMessages {
            try db.execute(sql: "DELETE FROM pending_group_messages WHERE id = ?", arguments: [Int64(truncatingIfNeeded: id)])
        }
        if let pending = commit.pendingGroupMessage {
            let owner = receiverOwner(pending.group, pending.sender, sealer: sealer)
            try db.execute(sql: "INSERT INTO pending_group_messages (owner_hash, expires_at, sealed) VALUES (?, ?, x'')",
                           arguments: [Data(owner), pending.expiresAt.secondsSince1970])
            let id = db.lastInsertedRowID
            let sealed = try sealer.seal(pending.message, table: .pendingGroupMessages, rowKey: owner + idBytes(id))
            try db.execute(sql: "UPDATE pending_group_messages SET sealed = ? WHERE id = ?", arguments: [Data(sealed), id])
            // Beyond the limit per sender and group, the oldest go.
            try db.execute(sql: """
                DELETE FROM pending_group_messages WHERE owner_hash = ? AND id NOT IN (
                    SELECT id FROM pending_group_messages WHERE owner_hash = ? ORDER BY id DESC LIMIT ?)
                """, arguments: [Data(owner), Data(owner), PendingGroupMessage.maximumPerSender])
        }
    }

    /// Indexes the chain ids of the receiver state `owner` holds now (`chainIDs`; none: removed).
    static func indexReceiverChains(_ chainIDs: [[UInt8]], owner: [UInt8], db: Database, sealer: ValueSealer) throws {
        try db.execute(sql: "DELETE FROM receiver_chains WHERE owner_hash = ?", arguments: [Data(owner)])
        for chainID in chainIDs {
            try db.execute(sql: "INSERT OR REPLACE INTO receiver_chains (chain_hash, owner_hash) VALUES (?, ?)",
                           arguments: [Data(sealer.rowKey(chainID, in: .receiverChain)), Data(owner)])
        }
    }

    // MARK: Support

    /// The name of the chains received from `sender` in `group`: the keyed hashes of both, as
    /// `receiver_states` names them.
    static func receiverOwner(_ group: GroupID, _ sender: ProtocolAddress, sealer: ValueSealer) -> [UInt8] {
        sealer.rowKey(group.rawRepresentation, in: .senderKeyGroup) + sealer.rowKey(sender.encoded, in: .senderKeySender)
    }

    /// `u64(id)`, bound into a pending message's additional data.
    private static func idBytes(_ id: Int64) -> [UInt8] {
        (0 ..< 8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: id) >> (56 - 8 * $0)) }
    }
}

/// The sealed value of a `group_members` row: `u32(count) || Encode(address)*` (SPEC §1), in
/// increasing order of the encoding, then the members' join points in our sending chain
/// (SPEC §9): `u32(count) || (Encode(address) || chain_id (32) || u64(iteration))*`, in the same
/// order. A row written before join points were kept ends after the members (none then).
enum GroupMembersCoding {
    /// A decoded value.
    struct Value {
        /// The member devices.
        var members: Set<ProtocolAddress> = []
        /// Their join points (members only).
        var joinPoints: [ProtocolAddress: GroupJoinPoint] = [:]
    }

    /// The members and their join points as a value (points of non-members are left out).
    static func encode(_ members: Set<ProtocolAddress>, joinPoints: [ProtocolAddress: GroupJoinPoint]) -> [UInt8] {
        let sorted = members.sorted(by: { $0.encoded.lexicographicallyPrecedes($1.encoded) })
        var out: [UInt8] = []
        out.appendBigEndian(UInt32(truncatingIfNeeded: members.count))
        for member in sorted { out.append(contentsOf: member.encoded) }
        let pointed = sorted.filter { joinPoints[$0]?.chainID.count == 32 }
        out.appendBigEndian(UInt32(truncatingIfNeeded: pointed.count))
        for member in pointed {
            guard let point = joinPoints[member] else { continue }
            out.append(contentsOf: member.encoded)
            out.append(contentsOf: point.chainID)
            out.appendBigEndian(Int64(bitPattern: point.iteration))
        }
        return out
    }

    /// Decodes an opened value.
    /// - Throws: `SQLiteStoreError.invalidValue(table:)` when it does not decode (a join point
    ///   of a device that is not a member, or named twice, included).
    static func decode(_ value: [UInt8]) throws(SQLiteStoreError) -> Value {
        do {
            return try value.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(ValueDecodingError) -> Value in
                var reader = ValueReader(bytes)
                var decoded = Value()
                let count = try reader.readUInt32()
                for _ in 0 ..< count { decoded.members.insert(try readAddress(&reader)) }
                guard decoded.members.count == Int(count) else { throw ValueDecodingError() }
                if !reader.isAtEnd {
                    let pointCount = try reader.readUInt32()
                    for _ in 0 ..< pointCount {
                        let member = try readAddress(&reader)
                        let chainID = try reader.readBytes(32)
                        let iteration = try reader.readUInt64()
                        guard decoded.members.contains(member), decoded.joinPoints[member] == nil else { throw ValueDecodingError() }
                        decoded.joinPoints[member] = GroupJoinPoint(chainID: chainID, iteration: iteration)
                    }
                }
                guard reader.isAtEnd else { throw ValueDecodingError() }
                return decoded
            }
        } catch {
            throw .invalidValue(table: SealedTable.groupMembers.name)
        }
    }

    /// Reads one `Encode(address)`.
    private static func readAddress(_ reader: inout ValueReader) throws(ValueDecodingError) -> ProtocolAddress {
        let length = Int(try reader.readByte())
        let uid = try reader.readBytes(length)
        let device = try reader.readUInt32()
        do {
            return try ProtocolAddress(userID: String(decoding: uid, as: UTF8.self), deviceID: device)
        } catch {
            throw ValueDecodingError()
        }
    }
}
