/// Where sender-key chains live (SPEC §5): this device's own sending chain per group, and the
/// chains received from each member device per (group, sender address).
///
/// Implementations must be safe to call concurrently and make each call atomic. Chains are
/// written through `ProtocolStore.commit(_:)`, with their generation compared and swapped; a
/// loaded chain carries its stored generation.
public protocol SenderKeyStore: Sendable {
    /// Our sending chain for `group`, or `nil`.
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadSendingChain(for group: GroupID) async throws(SessionError) -> SenderKeySendingChain?

    /// The chains received from `sender` in `group`, or `nil`.
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> SenderKeyReceiverState?

    /// Forgets the chains received from `sender` in `group` (a member left).
    /// - Throws: `SessionError.storage` when the backend fails.
    func removeReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError)
}
