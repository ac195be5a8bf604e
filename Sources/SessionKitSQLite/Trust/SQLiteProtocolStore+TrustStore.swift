import Foundation
import GRDB
@_spi(Storage) import SessionKit
import Verification

/// Trust on first use, with exactly `InMemoryTrustStore`'s behaviour, one transaction per call.
///
/// A record lives in `trust` under the keyed hash of its address (`ProtocolAddress.encoded`:
/// user id bytes and device id), its value sealed for that hash: the file does not list
/// contacts, and a record copied to another address does not open.
extension SQLiteProtocolStore: TrustStore {
    /// Records `identityKey` for `address` and reports first use, no change, or a change (the
    /// contact then becomes `unverified`, sending refused, until the app accepts or verifies it).
    /// - Throws: `VerificationError.storage` when the file fails or the record is damaged.
    public func observeIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) -> IdentityObservation {
        let rowKey = sealer.rowKey(address.encoded, in: .trustAddress)
        do {
            return try await writeTransaction { [sealer] db in
                try Self.recordObservation(identityKey, rowKey: rowKey, db: db, sealer: sealer)
            }
        } catch {
            throw Self.verificationError(error)
        }
    }

    /// `observeIdentity` inside the caller's transaction (also `commit`'s identity write): the
    /// first key becomes trusted; a different key replaces it, unverified, awaiting acceptance.
    static func recordObservation(
        _ identityKey: Ed25519.PublicKey, rowKey: [UInt8], db: Database, sealer: ValueSealer
    ) throws -> IdentityObservation {
        let current = try readTrustRecord(db, rowKey: rowKey, sealer: sealer)
        let next: TrustRecord
        let observation: IdentityObservation
        if let current {
            if current.identityKey == identityKey { return .unchanged }
            next = TrustRecord(identityKey: identityKey, status: .unverified, previousIdentityKey: current.identityKey)
            observation = .changed(previous: current.identityKey)
        } else {
            next = TrustRecord(identityKey: identityKey, status: .trusted, previousIdentityKey: nil)
            observation = .firstUse
        }
        let sealed = try sealer.seal(TrustRecordCoding.encode(next), table: .trust, rowKey: rowKey)
        try db.execute(sql: "INSERT OR REPLACE INTO trust (address_hash, sealed) VALUES (?, ?)", arguments: [Data(rowKey), Data(sealed)])
        return observation
    }

    /// SessionKit's check: what `observeIdentity` would report, and whether encrypting to
    /// `identityKey` is allowed now. Records nothing.
    /// - Throws: `VerificationError.storage` when the file fails or the record is damaged.
    public func evaluateIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) -> TrustDecision {
        guard let record = try await record(for: address) else { return TrustDecision(observation: .firstUse, allowsSending: true) }
        guard record.identityKey == identityKey else {
            return TrustDecision(observation: .changed(previous: record.identityKey), allowsSending: false)
        }
        return TrustDecision(observation: .unchanged, allowsSending: record.allowsSending(to: identityKey))
    }

    /// SessionKit's record step, after an operation that saw `identityKey` succeeded:
    /// `observeIdentity`.
    /// - Throws: as `observeIdentity`.
    public func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) -> IdentityObservation {
        try await observeIdentity(identityKey, for: address)
    }

    /// The record for `address`, or `nil`.
    /// - Throws: `VerificationError.storage` when the file fails or the record is damaged.
    public func record(for address: ProtocolAddress) async throws(VerificationError) -> TrustRecord? {
        let rowKey = sealer.rowKey(address.encoded, in: .trustAddress)
        do {
            return try await singleStatementRead { [sealer] db in try Self.readTrustRecord(db, rowKey: rowKey, sealer: sealer) }
        } catch {
            throw Self.verificationError(error)
        }
    }

    /// The status of `address` (`unverified` when no key was seen).
    /// - Throws: `VerificationError.storage` when the file fails or the record is damaged.
    public func status(for address: ProtocolAddress) async throws(VerificationError) -> TrustStatus {
        try await record(for: address)?.status ?? .unverified
    }

    /// Marks `identityKey` verified for `address` (recording it if no key was seen; accepting a
    /// pending change to it).
    /// - Throws: `VerificationError.identityKeyMismatch` when another key is on record,
    ///   `.storage` when the file fails.
    public func markVerified(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) {
        try await trustWrite(address) { record throws(VerificationError) -> (TrustRecord??, Void) in
            if let record, record.identityKey != identityKey { throw .identityKeyMismatch(address) }
            return (.some(TrustRecord(identityKey: identityKey, status: .verified, previousIdentityKey: nil)), ())
        }
    }

    /// Returns a verified contact to `trusted`; other statuses are unchanged.
    /// - Throws: `VerificationError.unknownContact` when no key was seen, `.storage` when the
    ///   file fails.
    public func clearVerification(for address: ProtocolAddress) async throws(VerificationError) {
        try await trustWrite(address) { record throws(VerificationError) -> (TrustRecord??, Void) in
            guard let record else { throw .unknownContact(address) }
            guard record.status == .verified else { return (nil, ()) }
            return (.some(TrustRecord(identityKey: record.identityKey, status: .trusted, previousIdentityKey: nil)), ())
        }
    }

    /// Accepts the changed key for `address`: the contact becomes `trusted` and sending is
    /// allowed again. Does nothing when no change awaits acceptance.
    /// - Throws: `VerificationError.unknownContact` when no key was seen, `.identityKeyMismatch`
    ///   when `identityKey` is not the key on record, `.storage` when the file fails.
    public func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) {
        try await trustWrite(address) { record throws(VerificationError) -> (TrustRecord??, Void) in
            guard let record else { throw .unknownContact(address) }
            guard record.identityKey == identityKey else { throw .identityKeyMismatch(address) }
            guard record.isAwaitingAcceptance else { return (nil, ()) }
            return (.some(TrustRecord(identityKey: identityKey, status: .trusted, previousIdentityKey: nil)), ())
        }
    }

    /// Forgets `address` (the next key seen is a first use). The row is deleted without being
    /// read, so this also clears a record that no longer opens (`VerificationError.storage`
    /// naming a damaged value).
    /// - Throws: `VerificationError.storage` when the file fails.
    public func removeRecord(for address: ProtocolAddress) async throws(VerificationError) {
        let rowKey = sealer.rowKey(address.encoded, in: .trustAddress)
        do {
            try await writeTransaction { db in
                try db.execute(sql: "DELETE FROM trust WHERE address_hash = ?", arguments: [Data(rowKey)])
            }
        } catch {
            throw Self.verificationError(error)
        }
    }

    // MARK: Support

    /// One read-modify-write of the record of `address` in a write transaction. `change`
    /// returns what to store (`nil`: leave the row; `.some(nil)`: delete it; `.some(record)`:
    /// store it) and the call's result.
    private func trustWrite<Result: Sendable>(
        _ address: ProtocolAddress,
        _ change: @escaping @Sendable (TrustRecord?) throws(VerificationError) -> (TrustRecord??, Result)
    ) async throws(VerificationError) -> Result {
        let rowKey = sealer.rowKey(address.encoded, in: .trustAddress)
        do {
            return try await writeTransaction { [sealer] db in
                let current = try Self.readTrustRecord(db, rowKey: rowKey, sealer: sealer)
                let (next, result) = try change(current)
                switch next {
                case .none: break
                case .some(.none):
                    try db.execute(sql: "DELETE FROM trust WHERE address_hash = ?", arguments: [Data(rowKey)])
                case let .some(.some(record)):
                    let sealed = try sealer.seal(TrustRecordCoding.encode(record), table: .trust, rowKey: rowKey)
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO trust (address_hash, sealed) VALUES (?, ?)",
                        arguments: [Data(rowKey), Data(sealed)])
                }
                return result
            }
        } catch {
            throw Self.verificationError(error)
        }
    }

    /// The record stored under `rowKey`, inside the caller's transaction.
    static func readTrustRecord(_ db: Database, rowKey: [UInt8], sealer: ValueSealer) throws -> TrustRecord? {
        let statement = try db.cachedStatement(sql: "SELECT sealed FROM trust WHERE address_hash = ?")
        guard let value = try DatabaseValue.fetchOne(statement, arguments: [Data(rowKey)]) else {
            return nil
        }
        return try TrustRecordCoding.decode(try sealer.open(try blob(value, table: .trust), table: .trust, rowKey: rowKey))
    }
}
