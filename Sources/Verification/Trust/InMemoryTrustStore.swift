import SessionKit

/// A `TrustStore` held in memory, persistable through `TrustSnapshot`: one record per user.
///
/// Every method runs on the actor, so each observation, verification or acceptance is atomic.
public actor InMemoryTrustStore: TrustStore {
    private var records: [TrustUserID: TrustRecord]

    /// An empty store.
    public init() {
        records = [:]
    }

    /// A store holding `snapshot`'s records.
    public init(snapshot: TrustSnapshot) {
        records = snapshot.records
    }

    /// A store loaded from a blob written by `serialized()` (or by an earlier version, whose
    /// per-device records are folded per user as `TrustSnapshot` says).
    /// - Throws: `VerificationError.invalidPayload` or `.unsupportedVersion` (see `TrustSnapshot`).
    public init(serialized blob: [UInt8]) throws(VerificationError) {
        records = try TrustSnapshot(serialized: blob).records
    }

    /// The current records.
    public func snapshot() -> TrustSnapshot { TrustSnapshot(records: records) }

    /// The persisted form of the current records (see `TrustSnapshot` for the layout).
    public func serialized() -> [UInt8] { snapshot().serialized }

    /// Records `identityKey` seen on `address` (`TrustRecord.observing`): first use, the user's
    /// key on a known or a new device, a change on a listed device (the user becomes
    /// `unverified`, sending refused, until the app accepts, verifies or rejects), or another
    /// key on a device not listed (nothing recorded).
    public func observeIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> IdentityObservation {
        let user = TrustUserID(address)
        let (next, observation) = TrustRecord.observing(identityKey, device: address.deviceID, in: records[user])
        if let next { records[user] = next }
        return observation
    }

    /// SessionKit's check (`TrustRecord.decision`); records nothing.
    public func evaluateIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> TrustDecision {
        TrustRecord.decision(for: identityKey, device: address.deviceID, in: records[TrustUserID(address)])
    }

    /// `evaluateIdentity(_:for:)` for each pair, in order, in one call.
    public func evaluateIdentities(_ queries: [(identityKey: Ed25519.PublicKey, address: ProtocolAddress)]) -> [TrustDecision] {
        queries.map { evaluateIdentity($0.identityKey, for: $0.address) }
    }

    /// SessionKit's record step, after an operation that saw `identityKey` succeeded:
    /// `observeIdentity`.
    public func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> IdentityObservation {
        observeIdentity(identityKey, for: address)
    }

    /// The record for the user, or `nil`.
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id.
    public func record(forUser userID: String) throws(VerificationError) -> TrustRecord? { records[try TrustUserID(userID)] }

    /// The status of the user (`unverified` when no key was seen).
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id.
    public func status(forUser userID: String) throws(VerificationError) -> TrustStatus {
        try record(forUser: userID)?.status ?? .unverified
    }

    /// Marks `identityKey` verified for the user (`TrustRecord.verifying`: accepting it and
    /// marking it verified in one step).
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id.
    public func markVerified(_ identityKey: Ed25519.PublicKey, forUser userID: String) throws(VerificationError) {
        let user = try TrustUserID(userID)
        records[user] = TrustRecord.verifying(identityKey, of: userID, in: records[user])
    }

    /// Returns a verified user to `trusted`; other statuses are unchanged.
    /// - Throws: `VerificationError.unknownContact` when no key was seen, `.invalidPayload` for
    ///   a malformed user id.
    public func clearVerification(forUser userID: String) throws(VerificationError) {
        let user = try TrustUserID(userID)
        guard let record = records[user] else { throw .unknownContact(userID) }
        if let next = record.clearingVerification { records[user] = next }
    }

    /// Accepts `identityKey` for the user (`TrustRecord.accepting`).
    /// - Throws: `VerificationError.identityKeyMismatch` for a third key while a change awaits
    ///   acceptance, `.invalidPayload` for a malformed user id.
    public func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, forUser userID: String) throws(VerificationError) {
        let user = try TrustUserID(userID)
        if let next = try TrustRecord.accepting(identityKey, of: userID, in: records[user]) { records[user] = next }
    }

    /// Rejects the user's pending key change (`TrustRecord.rejecting`) and returns the user's
    /// key on record afterwards.
    /// - Throws: `VerificationError.unknownContact` when there is no record, `.invalidPayload`
    ///   for a malformed user id.
    @discardableResult
    public func rejectIdentityChange(forUser userID: String) throws(VerificationError) -> Ed25519.PublicKey {
        let user = try TrustUserID(userID)
        let current = records[user]
        guard let next = try TrustRecord.rejecting(of: userID, in: current) else {
            guard let current else { throw .unknownContact(userID) }
            return current.identityKey
        }
        records[user] = next
        return next.identityKey
    }

    /// Forgets the user.
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id.
    public func removeRecord(forUser userID: String) throws(VerificationError) {
        records[try TrustUserID(userID)] = nil
    }
}
