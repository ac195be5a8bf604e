import SessionKit

/// A store that forwards every call to the store under test, and can hold back the next
/// commit instead (it throws `SessionError.storage` to the manager and keeps the commit): a
/// way to obtain, through the public API, the commit a manager would make, to replay it later.
actor CapturingStore: ProtocolStore {
    let base: any ProtocolStore
    private var capturesNext = false
    private(set) var captured: StoreCommit?

    init(base: any ProtocolStore) { self.base = base }

    /// Holds back the next commit (and forgets the last one held back).
    func captureNextCommit() {
        capturesNext = true
        captured = nil
    }

    func commit(_ commit: StoreCommit) async throws(SessionError) {
        if capturesNext {
            capturesNext = false
            captured = commit
            throw .storage("held back by the store conformance kit")
        }
        try await base.commit(commit)
    }

    func localIdentity() async throws(SessionError) -> IdentityKeyPair { try await base.localIdentity() }
    func localRegistrationID() async throws(SessionError) -> RegistrationID { try await base.localRegistrationID() }
    func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord? { try await base.loadSession(for: address) }
    func deleteSession(for address: ProtocolAddress) async throws(SessionError) { try await base.deleteSession(for: address) }
    func deviceIDs(ofUser userID: String) async throws(SessionError) -> [UInt32] { try await base.deviceIDs(ofUser: userID) }
    func loadPreKeys() async throws(SessionError) -> LocalPreKeys? { try await base.loadPreKeys() }
    func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        try await base.updatePreKeys(update)
    }
    func hasRecordedBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) async throws(SessionError) -> Bool {
        try await base.hasRecordedBaseKey(baseKey, signedPreKeyID: signedPreKeyID)
    }
    func loadSendingChain(for group: GroupID) async throws(SessionError) -> SenderKeySendingChain? {
        try await base.loadSendingChain(for: group)
    }
    func loadReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> SenderKeyReceiverState? {
        try await base.loadReceiverState(for: group, sender: sender)
    }
    func removeReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) {
        try await base.removeReceiverState(for: group, sender: sender)
    }
    func loadGroupMembers(for group: GroupID) async throws(SessionError) -> Set<ProtocolAddress> {
        try await base.loadGroupMembers(for: group)
    }
    func loadPendingGroupMessages(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> [PendingGroupMessage] {
        try await base.loadPendingGroupMessages(for: group, sender: sender)
    }
    func holdsReceiverChain(_ chainID: [UInt8]) async throws(SessionError) -> Bool { try await base.holdsReceiverChain(chainID) }
    func loadGroupJoinPoints(for group: GroupID) async throws(SessionError) -> [ProtocolAddress: GroupJoinPoint] {
        try await base.loadGroupJoinPoints(for: group)
    }
}
