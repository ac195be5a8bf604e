/// Where sender-key chains live (SPEC §5): this device's own sending chain per group, and the
/// chains received from each member device per (group, sender address).
///
/// Implementations must be safe to call concurrently and make each call atomic.
public protocol SenderKeyStore: Sendable {
    /// Our sending chain for `group`, or `nil`.
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadSendingChain(for group: GroupID) async throws(SessionError) -> SenderKeySendingChain?

    /// Stores our sending chain for `group`, replacing any earlier one.
    /// - Throws: `SessionError.storage` when the backend fails; the earlier chain stays.
    func storeSendingChain(_ chain: SenderKeySendingChain, for group: GroupID) async throws(SessionError)

    /// The chains received from `sender` in `group`, or `nil`.
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> SenderKeyReceiverState?

    /// Stores the chains received from `sender` in `group`, replacing any earlier ones.
    /// - Throws: `SessionError.storage` when the backend fails; the earlier state stays.
    func storeReceiverState(_ state: SenderKeyReceiverState, for group: GroupID, sender: ProtocolAddress) async throws(SessionError)

    /// Forgets the chains received from `sender` in `group` (a member left).
    /// - Throws: `SessionError.storage` when the backend fails.
    func removeReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError)
}
