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
    /// key on a known or a new device, or a change (the user becomes `unverified`, sending
    /// refused, until the app accepts or verifies the new key).
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

    /// Marks `identityKey` verified for the user (`TrustRecord.verifying`).
    /// - Throws: `VerificationError.identityKeyMismatch` when another key is on record,
    ///   `.invalidPayload` for a malformed user id.
    public func markVerified(_ identityKey: Ed25519.PublicKey, forUser userID: String) throws(VerificationError) {
        let user = try TrustUserID(userID)
        records[user] = try TrustRecord.verifying(identityKey, of: userID, in: records[user])
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
    /// - Throws: `VerificationError.identityKeyMismatch` when a change to another key awaits
    ///   acceptance, `.invalidPayload` for a malformed user id.
    public func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, forUser userID: String) throws(VerificationError) {
        let user = try TrustUserID(userID)
        if let next = try TrustRecord.accepting(identityKey, of: userID, in: records[user]) { records[user] = next }
    }

    /// Forgets the user.
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id.
    public func removeRecord(forUser userID: String) throws(VerificationError) {
        records[try TrustUserID(userID)] = nil
    }
}
