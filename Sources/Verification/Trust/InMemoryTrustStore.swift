import SessionKit

/// A `TrustStore` held in memory, persistable through `TrustSnapshot`.
///
/// Every method runs on the actor, so each observation, verification or acceptance is atomic.
public actor InMemoryTrustStore: TrustStore {
    private var records: [ProtocolAddress: TrustRecord]

    /// An empty store.
    public init() {
        records = [:]
    }

    /// A store holding `snapshot`'s records.
    public init(snapshot: TrustSnapshot) {
        records = snapshot.records
    }

    /// A store loaded from a blob written by `serialized()`.
    /// - Throws: `VerificationError.invalidPayload` or `.unsupportedVersion` (see `TrustSnapshot`).
    public init(serialized blob: [UInt8]) throws(VerificationError) {
        records = try TrustSnapshot(serialized: blob).records
    }

    /// The current records.
    public func snapshot() -> TrustSnapshot { TrustSnapshot(records: records) }

    /// The persisted form of the current records (see `TrustSnapshot` for the layout).
    public func serialized() -> [UInt8] { snapshot().serialized }

    /// Records `identityKey` for `address` and reports first use, no change, or a change.
    /// A change keeps the key it replaces as `previousIdentityKey` and makes the contact
    /// `unverified` (sending refused) until the app accepts or verifies the new key.
    public func observeIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> IdentityObservation {
        guard let record = records[address] else {
            records[address] = TrustRecord(identityKey: identityKey, status: .trusted, previousIdentityKey: nil)
            return .firstUse
        }
        if record.identityKey == identityKey { return .unchanged }
        records[address] = TrustRecord(identityKey: identityKey, status: .unverified, previousIdentityKey: record.identityKey)
        return .changed(previous: record.identityKey)
    }

    /// SessionKit's check: what `observeIdentity` would report for `identityKey`, and whether
    /// encrypting to it is allowed now; records nothing.
    public func evaluateIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> TrustDecision {
        guard let record = records[address] else { return TrustDecision(observation: .firstUse, allowsSending: true) }
        guard record.identityKey == identityKey else {
            return TrustDecision(observation: .changed(previous: record.identityKey), allowsSending: false)
        }
        return TrustDecision(observation: .unchanged, allowsSending: record.allowsSending(to: identityKey))
    }

    /// SessionKit's record step, after an operation that saw `identityKey` succeeded:
    /// `observeIdentity`.
    public func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> IdentityObservation {
        observeIdentity(identityKey, for: address)
    }

    /// The record for `address`, or `nil`.
    public func record(for address: ProtocolAddress) -> TrustRecord? { records[address] }

    /// The status of `address` (`unverified` when no key was seen).
    public func status(for address: ProtocolAddress) -> TrustStatus { records[address]?.status ?? .unverified }

    /// Marks `identityKey` verified for `address` (recording it if no key was seen; accepting
    /// a pending change to it).
    /// - Throws: `VerificationError.identityKeyMismatch` when another key is on record.
    public func markVerified(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) throws(VerificationError) {
        if let record = records[address], record.identityKey != identityKey { throw .identityKeyMismatch(address) }
        records[address] = TrustRecord(identityKey: identityKey, status: .verified, previousIdentityKey: nil)
    }

    /// Returns a verified contact to `trusted`; other statuses are unchanged.
    /// - Throws: `VerificationError.unknownContact` when no key was seen.
    public func clearVerification(for address: ProtocolAddress) throws(VerificationError) {
        guard let record = records[address] else { throw .unknownContact(address) }
        guard record.status == .verified else { return }
        records[address] = TrustRecord(identityKey: record.identityKey, status: .trusted, previousIdentityKey: nil)
    }

    /// Accepts the changed key for `address`: the contact becomes `trusted` and sending is
    /// allowed again. Does nothing when no change awaits acceptance.
    /// - Throws: `VerificationError.unknownContact` when no key was seen,
    ///   `.identityKeyMismatch` when `identityKey` is not the key on record.
    public func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) throws(VerificationError) {
        guard let record = records[address] else { throw .unknownContact(address) }
        guard record.identityKey == identityKey else { throw .identityKeyMismatch(address) }
        guard record.isAwaitingAcceptance else { return }
        records[address] = TrustRecord(identityKey: identityKey, status: .trusted, previousIdentityKey: nil)
    }

    /// Forgets `address`.
    public func removeRecord(for address: ProtocolAddress) {
        records[address] = nil
    }
}
