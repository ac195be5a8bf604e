/// The manager's reads of stored state: a stored value that does not load (the store reports
/// `invalidPayload` or `unsupportedVersion` while decoding it) is this device's damaged state,
/// not a bad message, and reaches the app as `SessionError.damagedState` naming the state.
extension SessionManager {
    /// The record of `address`.
    func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord? {
        do { return try await store.loadSession(for: address) } catch { throw Self.stored(error, .session, peer: address) }
    }

    /// The record of `address` to change and commit: possibly the store's cached copy, which
    /// the commit's compare-and-swap checks, and with `currentSessionSuffices` possibly without
    /// its previous sessions (`CachingSessionStore`). A failure judged on it must be checked
    /// on the stored record (`judgedOnStoredRecord`).
    func loadSessionForUpdate(
        for address: ProtocolAddress, currentSessionSuffices: Bool = false
    ) async throws(SessionError) -> SessionRecord? {
        guard let caching = store as? any CachingSessionStore else { return try await loadSession(for: address) }
        do {
            return try await caching.loadSessionForUpdate(for: address, currentSessionSuffices: currentSessionSuffices)
        } catch {
            throw Self.stored(error, .session, peer: address)
        }
    }

    /// Our sending chain for `group`.
    func loadSendingChain(for group: GroupID) async throws(SessionError) -> SenderKeySendingChain? {
        do { return try await store.loadSendingChain(for: group) } catch { throw Self.stored(error, .senderKeySendingChain) }
    }

    /// The chains received from `sender` in `group`.
    func loadReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> SenderKeyReceiverState? {
        do { return try await store.loadReceiverState(for: group, sender: sender) } catch {
            throw Self.stored(error, .senderKeyReceiverState, peer: sender)
        }
    }

    /// The member devices of `group`.
    func loadGroupMembers(for group: GroupID) async throws(SessionError) -> Set<ProtocolAddress> {
        do { return try await store.loadGroupMembers(for: group) } catch { throw Self.stored(error, .groupMembers) }
    }

    /// The join points of `group`'s members in our sending chain (SPEC §9).
    func loadGroupJoinPoints(for group: GroupID) async throws(SessionError) -> [ProtocolAddress: GroupJoinPoint] {
        do { return try await store.loadGroupJoinPoints(for: group) } catch { throw Self.stored(error, .groupMembers) }
    }

    /// This device's identity key pair.
    func loadLocalIdentity() async throws(SessionError) -> IdentityKeyPair {
        do { return try await store.localIdentity() } catch { throw Self.stored(error, .identity) }
    }

    /// The prekeys a prekey message names, with the in-flight window for classic messages
    /// decided at the clock's current time (`PreKeyPolicy.classicPreKeyMessageWindow`).
    func loadPreKeys(for prefix: PreKeyMessage.Prefix) async throws(SessionError) -> PreKeySet {
        do { return try await store.preKeys(for: prefix, now: clock.now(), policy: preKeyPolicy) } catch {
            throw Self.stored(error, .preKeys)
        }
    }

    /// `error` from reading a stored `kind` (of `peer`, when it is one device's): a decoding
    /// error becomes `.damagedState(kind, peer:)`, and a store's own `damagedState` gains the peer.
    static func stored(_ error: SessionError, _ kind: StoredStateKind, peer: ProtocolAddress? = nil) -> SessionError {
        switch error {
        case .invalidPayload, .unsupportedVersion: return .damagedState(kind, peer: peer)
        case let .damagedState(storedKind, nil) where peer != nil: return .damagedState(storedKind, peer: peer)
        default: return error
        }
    }
}
