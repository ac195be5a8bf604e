import Foundation
import GRDB
@_spi(Storage) import SessionKit
@_spi(Storage) import Verification

/// Trust on first use per user, with exactly `InMemoryTrustStore`'s behaviour (`TrustRecord`'s
/// transitions), one transaction per call.
///
/// A record lives in `trust_users` under the keyed hash of its user id, its value sealed for
/// that hash: the file does not list contacts, and a record copied to another user does not
/// open. The user id is also kept sealed for its hash in `known_ids` (`SchemaKnownIDs`, for
/// account exports), written with the record and deleted with it. Records of schema 1 and 2 (per device, in `trust`) are folded per user, as
/// `TrustSnapshot` folds a version-1 blob, the first time their user is looked up
/// (`SchemaVersion3`); a read reports the folded record, the next write stores it.
extension SQLiteProtocolStore: TrustStore {
    /// Records `identityKey` seen on `address` (`TrustRecord.observing`): first use, the user's
    /// key on a known or a new device, a change on a listed device (the user then becomes
    /// `unverified`, sending refused, until the app accepts, verifies or rejects), or another
    /// key on a device not listed (nothing recorded).
    /// - Throws: `VerificationError.storage` when the file fails or the record is damaged.
    public func observeIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) -> IdentityObservation {
        let user = TrustUserID(address)
        defer { trustCache.remove(user) }
        do {
            return try await writeTransaction { [sealer] db in
                try Self.recordObservation(identityKey, device: address.deviceID, user: user, db: db, sealer: sealer)
            }
        } catch {
            throw Self.verificationError(error)
        }
    }

    /// `observeIdentity` inside the caller's transaction (also `commit`'s identity write).
    static func recordObservation(
        _ identityKey: Ed25519.PublicKey, device: UInt32, user: TrustUserID, db: Database, sealer: ValueSealer
    ) throws -> IdentityObservation {
        let stored = try readUserRecord(db, user: user, sealer: sealer)
        let (next, observation) = TrustRecord.observing(identityKey, device: device, in: stored.record)
        if let next {
            try writeUserRecord(next, user: user, replacing: stored, db: db, sealer: sealer)
        } else if !stored.legacyRowKeys.isEmpty, let record = stored.record {
            try writeUserRecord(record, user: user, replacing: stored, db: db, sealer: sealer)
        }
        return observation
    }

    /// SessionKit's check (`TrustRecord.decision`). Records nothing.
    ///
    /// A record whose answer is the everyday one (the user's key, sending allowed) is kept in
    /// memory and answers without reading the file (`TrustRecordCache`); a commit that stores a
    /// session of the user checks, inside its transaction, that the file still holds that
    /// record (another process may have changed it) and is refused as stale otherwise, so that
    /// the manager decides again on the record read anew. Every other answer reads the file.
    /// - Throws: `VerificationError.storage` when the file fails or the record is damaged.
    public func evaluateIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) -> TrustDecision {
        let user = TrustUserID(address)
        // Only the everyday answer (the user's key, sending allowed) is taken from memory: any
        // other is read again, so that a change another process made (an accepted key, say)
        // is seen at once, not only at the next commit.
        if let cached = trustCache.entry(for: user) {
            let decision = TrustRecord.decision(for: identityKey, device: address.deviceID, in: cached.record)
            if decision.observation == .unchanged, decision.allowsSending, !decision.isSuperseded { return decision }
        }
        let stored: StoredTrustRecord
        do {
            stored = try await readTransaction { [sealer] db in try Self.readUserRecord(db, user: user, sealer: sealer) }
        } catch {
            throw Self.verificationError(error)
        }
        // A record folded from per-device rows is not cached: it has no sealed value to compare.
        if stored.legacyRowKeys.isEmpty { trustCache.store(.init(sealed: stored.sealed, record: stored.record), for: user) }
        return TrustRecord.decision(for: identityKey, device: address.deviceID, in: stored.record)
    }

    /// SessionKit's record step, after an operation that saw `identityKey` succeeded:
    /// `observeIdentity`.
    /// - Throws: as `observeIdentity`.
    public func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) -> IdentityObservation {
        try await observeIdentity(identityKey, for: address)
    }

    /// The record for the user, or `nil`.
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id, `.storage` when the
    ///   file fails or the record is damaged.
    public func record(forUser userID: String) async throws(VerificationError) -> TrustRecord? {
        try await record(of: try TrustUserID(userID))
    }

    /// The status of the user (`unverified` when no key was seen).
    /// - Throws: as `record(forUser:)`.
    public func status(forUser userID: String) async throws(VerificationError) -> TrustStatus {
        try await record(forUser: userID)?.status ?? .unverified
    }

    /// Marks `identityKey` verified for the user (`TrustRecord.verifying`: accepting it and
    /// marking it verified in one step).
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id, `.storage` when the
    ///   file fails.
    public func markVerified(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws(VerificationError) {
        try await trustWrite(try TrustUserID(userID)) { record throws(VerificationError) in
            TrustRecord.verifying(identityKey, of: userID, in: record)
        }
    }

    /// Returns a verified user to `trusted`; other statuses are unchanged.
    /// - Throws: `VerificationError.unknownContact` when no key was seen, `.invalidPayload` for
    ///   a malformed user id, `.storage` when the file fails.
    public func clearVerification(forUser userID: String) async throws(VerificationError) {
        try await trustWrite(try TrustUserID(userID)) { record throws(VerificationError) in
            guard let record else { throw .unknownContact(userID) }
            return record.clearingVerification
        }
    }

    /// Accepts `identityKey` for the user (`TrustRecord.accepting`).
    /// - Throws: `VerificationError.identityKeyMismatch` for a third key while a change awaits
    ///   acceptance, `.invalidPayload` for a malformed user id, `.storage` when the file fails.
    public func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws(VerificationError) {
        try await trustWrite(try TrustUserID(userID)) { record throws(VerificationError) in
            try TrustRecord.accepting(identityKey, of: userID, in: record)
        }
    }

    /// Rejects the user's pending key change (`TrustRecord.rejecting`), in one transaction, and
    /// returns the user's key on record afterwards.
    /// - Throws: `VerificationError.unknownContact` when there is no record, `.invalidPayload`
    ///   for a malformed user id, `.storage` when the file fails.
    @discardableResult
    public func rejectIdentityChange(forUser userID: String) async throws(VerificationError) -> Ed25519.PublicKey {
        let record = try await trustWrite(try TrustUserID(userID)) { record throws(VerificationError) in
            try TrustRecord.rejecting(of: userID, in: record)
        }
        guard let record else { throw .unknownContact(userID) }
        return record.identityKey
    }

    /// Forgets the user (the next key seen is a first use). The rows are deleted without being
    /// read, so this also clears a record that no longer opens (`VerificationError.storage`
    /// naming a damaged value).
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id, `.storage` when the
    ///   file fails.
    public func removeRecord(forUser userID: String) async throws(VerificationError) {
        let user = try TrustUserID(userID)
        defer { trustCache.remove(user) }
        do {
            try await writeTransaction { [sealer] db in
                let rowKey = sealer.rowKey(user.utf8, in: .trustUser)
                try db.execute(sql: "DELETE FROM trust_users WHERE user_hash = ?", arguments: [Data(rowKey)])
                try KnownIDs.forget(hash: rowKey, db: db)
                for rowKey in try Self.legacyRowKeys(db, user: user, sealer: sealer) {
                    try db.execute(sql: "DELETE FROM trust WHERE address_hash = ?", arguments: [Data(rowKey)])
                }
            }
        } catch {
            throw Self.verificationError(error)
        }
    }

    // MARK: Support

    /// A user's record as read: the record (folded from per-device rows when `trust_users` has
    /// none) and the per-device rows it came from (to delete when it is written).
    struct StoredTrustRecord: Sendable {
        let record: TrustRecord?
        let legacyRowKeys: [[UInt8]]
        /// The sealed `trust_users` value read (`nil` when the user has no row there).
        var sealed: Data? = nil
    }

    /// The most device ids probed for per-device records of schema 1 and 2, besides the devices
    /// with a stored session: 0 … 64.
    static let legacyProbedDeviceIDs: ClosedRange<UInt32> = 0 ... 64

    /// The record of `user` in a read.
    private func record(of user: TrustUserID) async throws(VerificationError) -> TrustRecord? {
        do {
            return try await readTransaction { [sealer] db in try Self.readUserRecord(db, user: user, sealer: sealer).record }
        } catch {
            throw Self.verificationError(error)
        }
    }

    /// One read-modify-write of `user`'s record in a write transaction. `change` returns what
    /// to store (`nil`: leave it as it was, a folded record still being stored). Returns the
    /// user's record afterwards.
    @discardableResult
    private func trustWrite(
        _ user: TrustUserID, _ change: @escaping @Sendable (TrustRecord?) throws(VerificationError) -> TrustRecord?
    ) async throws(VerificationError) -> TrustRecord? {
        defer { trustCache.remove(user) }
        do {
            return try await writeTransaction { [sealer] db in
                let stored = try Self.readUserRecord(db, user: user, sealer: sealer)
                let changed = try change(stored.record)
                if let next = changed ?? (stored.legacyRowKeys.isEmpty ? nil : stored.record) {
                    try Self.writeUserRecord(next, user: user, replacing: stored, db: db, sealer: sealer)
                }
                return changed ?? stored.record
            }
        } catch {
            throw Self.verificationError(error)
        }
    }

    /// Inside a commit's transaction: throws `staleState` when the file no longer holds the
    /// trust record the store's decisions for `user` were made on (`TrustRecordCache`).
    static func checkCachedTrust(of user: TrustUserID, cache: TrustRecordCache, db: Database, sealer: ValueSealer) throws {
        guard let cached = cache.entry(for: user) else { return }
        let statement = try db.cachedStatement(sql: "SELECT sealed FROM trust_users WHERE user_hash = ?")
        let value = try DatabaseValue.fetchOne(statement, arguments: [Data(sealer.rowKey(user.utf8, in: .trustUser))])
        let sealed: Data? = switch value?.storage { case let .blob(data): data; default: nil }
        guard value == nil ? cached.sealed == nil : sealed != nil && sealed == cached.sealed else {
            cache.remove(user)
            throw SessionError.staleState
        }
    }

    /// The record of `user` inside the caller's transaction: its `trust_users` row, else its
    /// per-device rows of schema 1 and 2, folded.
    static func readUserRecord(_ db: Database, user: TrustUserID, sealer: ValueSealer) throws -> StoredTrustRecord {
        let rowKey = sealer.rowKey(user.utf8, in: .trustUser)
        let statement = try db.cachedStatement(sql: "SELECT sealed FROM trust_users WHERE user_hash = ?")
        if let value = try DatabaseValue.fetchOne(statement, arguments: [Data(rowKey)]) {
            let sealed = try blob(value, table: .trustUsers)
            let opened = try sealer.open(sealed, table: .trustUsers, rowKey: rowKey)
            return StoredTrustRecord(record: try TrustRecordCoding.decode(opened), legacyRowKeys: [], sealed: Data(sealed))
        }
        var devices: [(device: UInt32, record: TrustRecord)] = []
        var rowKeys: [[UInt8]] = []
        for (device, legacyKey) in try legacyRows(db, user: user, sealer: sealer) {
            let statement = try db.cachedStatement(sql: "SELECT sealed FROM trust WHERE address_hash = ?")
            guard let value = try DatabaseValue.fetchOne(statement, arguments: [Data(legacyKey)]) else { continue }
            let opened = try sealer.open(try blob(value, table: .trust), table: .trust, rowKey: legacyKey)
            devices.append((device, try TrustRecordCoding.decode(opened, perDevice: true)))
            rowKeys.append(legacyKey)
        }
        return StoredTrustRecord(record: TrustSnapshot.fold(devices), legacyRowKeys: rowKeys)
    }

    /// Stores `record` for `user`, records the user id in `known_ids` (for exports) and deletes
    /// the per-device rows it was folded from.
    static func writeUserRecord(
        _ record: TrustRecord, user: TrustUserID, replacing stored: StoredTrustRecord, db: Database, sealer: ValueSealer
    ) throws {
        let rowKey = sealer.rowKey(user.utf8, in: .trustUser)
        let sealed = try sealer.seal(TrustRecordCoding.encode(record), table: .trustUsers, rowKey: rowKey)
        try db.execute(
            sql: "INSERT OR REPLACE INTO trust_users (user_hash, sealed) VALUES (?, ?)", arguments: [Data(rowKey), Data(sealed)])
        try KnownIDs.record(user.utf8, hash: rowKey, db: db, sealer: sealer)
        for legacyKey in stored.legacyRowKeys {
            try db.execute(sql: "DELETE FROM trust WHERE address_hash = ?", arguments: [Data(legacyKey)])
        }
    }

    /// The row keys of `user`'s possible per-device rows, in increasing device order: the
    /// devices with a stored session and `legacyProbedDeviceIDs`. None once `trust` is empty.
    private static func legacyRows(_ db: Database, user: TrustUserID, sealer: ValueSealer) throws -> [(UInt32, [UInt8])] {
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM trust)") == true else { return [] }
        let sessionDevices = try Int64.fetchAll(
            db, sql: "SELECT device_id FROM sessions WHERE user_hash = ?",
            arguments: [Data(sealer.rowKey(user.utf8, in: .sessionUser))]
        ).map { UInt32(truncatingIfNeeded: $0) }
        let devices = Set(sessionDevices).union(legacyProbedDeviceIDs).sorted()
        return try devices.map { device in
            (device, sealer.rowKey(try ProtocolAddress(userID: user.userID, deviceID: device).encoded, in: .trustAddress))
        }
    }

    /// The per-device row keys of `user` (see `legacyRows`).
    static func legacyRowKeys(_ db: Database, user: TrustUserID, sealer: ValueSealer) throws -> [[UInt8]] {
        try legacyRows(db, user: user, sealer: sealer).map(\.1)
    }
}
