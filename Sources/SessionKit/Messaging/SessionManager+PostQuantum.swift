/// What the app can read of the post-quantum state of its sessions (see
/// PostQuantumSessions.md): whether the session a device is sent to is hybrid, and whether a
/// device is pinned to post-quantum sessions.
extension SessionManager {
    /// Whether the session `encrypt(_:to:)` uses for `address` (its current session) was created
    /// by a hybrid X3DH with a KEM part (PQXDH, SPEC §3), so that a recording of its traffic
    /// stays secret against a future quantum computer as long as ML-KEM holds. Show it, for
    /// example, next to the conversation. Sessions stored by a library version that did not
    /// record this read as classic (`false`) until they are replaced.
    /// - Throws: `SessionError.noSession` when the device has no current session,
    ///   `.damagedState(.session)` when the stored record does not load, `.storage` when the
    ///   store fails.
    public func isPostQuantum(sessionWith address: ProtocolAddress) async throws(SessionError) -> Bool {
        guard let session = try await loadSession(for: address)?.currentSession else { throw .noSession }
        return session.isPostQuantum
    }

    /// Whether the device `address` is pinned to post-quantum sessions: it has had a
    /// post-quantum session with this device (started from one of its bundles with a KEM
    /// prekey, or by its hybrid prekey message), so a bundle for it without a KEM prekey is
    /// refused with `SessionError.postQuantumRequired` (a server replaying its old classic
    /// bundle cannot downgrade it). The pin is stored with the device's session record and
    /// lasts as long as the record: `SessionStore.deleteSession(for:)` clears it (only for a
    /// device the user knows has lost its KEM, for example reinstalled with an app without one).
    /// - Throws: `SessionError.damagedState(.session)` when the stored record does not load,
    ///   `.storage` when the store fails.
    public func requiresPostQuantum(for address: ProtocolAddress) async throws(SessionError) -> Bool {
        try await loadSession(for: address)?.requiresPostQuantum ?? false
    }
}
