import SessionKit

/// A test store that forwards every call to `base`: conformers implement only the calls they
/// change (a store that refuses every commit, serves an old record once, drops the compare
/// and swap, ...).
public protocol ForwardingProtocolStore: ProtocolStore {
    /// The type of the store that does the work.
    associatedtype Base: ProtocolStore
    /// The store that does the work.
    nonisolated var base: Base { get }
}

extension ForwardingProtocolStore {
    /// Forwards to `base`.
    public func commit(_ commit: StoreCommit) async throws(SessionError) { try await base.commit(commit) }
    /// Forwards to `base`.
    public func localIdentity() async throws(SessionError) -> IdentityKeyPair { try await base.localIdentity() }
    /// Forwards to `base`.
    public func localRegistrationID() async throws(SessionError) -> RegistrationID { try await base.localRegistrationID() }
    /// Forwards to `base`.
    public func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord? {
        try await base.loadSession(for: address)
    }
    /// Forwards to `base`.
    public func deleteSession(for address: ProtocolAddress) async throws(SessionError) { try await base.deleteSession(for: address) }
    /// Forwards to `base`.
    public func deviceIDs(ofUser userID: String) async throws(SessionError) -> [UInt32] { try await base.deviceIDs(ofUser: userID) }
    /// Forwards to `base`.
    public func loadPreKeys() async throws(SessionError) -> LocalPreKeys? { try await base.loadPreKeys() }
    /// Forwards to `base`.
    public func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        try await base.updatePreKeys(update)
    }
    /// Forwards to `base`.
    public func hasRecordedBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) async throws(SessionError) -> Bool {
        try await base.hasRecordedBaseKey(baseKey, signedPreKeyID: signedPreKeyID)
    }
    /// Forwards to `base`.
    public func loadSendingChain(for group: GroupID) async throws(SessionError) -> SenderKeySendingChain? {
        try await base.loadSendingChain(for: group)
    }
    /// Forwards to `base`.
    public func loadReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> SenderKeyReceiverState? {
        try await base.loadReceiverState(for: group, sender: sender)
    }
    /// Forwards to `base`.
    public func removeReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) {
        try await base.removeReceiverState(for: group, sender: sender)
    }
    /// Forwards to `base`.
    public func loadGroupMembers(for group: GroupID) async throws(SessionError) -> Set<ProtocolAddress> {
        try await base.loadGroupMembers(for: group)
    }
    /// Forwards to `base`.
    public func loadPendingGroupMessages(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> [PendingGroupMessage] {
        try await base.loadPendingGroupMessages(for: group, sender: sender)
    }
    /// Forwards to `base`.
    public func holdsReceiverChain(_ chainID: [UInt8]) async throws(SessionError) -> Bool { try await base.holdsReceiverChain(chainID) }
    /// Forwards to `base`.
    public func loadGroupJoinPoints(for group: GroupID) async throws(SessionError) -> [ProtocolAddress: GroupJoinPoint] {
        try await base.loadGroupJoinPoints(for: group)
    }
}
