/// Everything a `SessionManager` stores, plus the one write that spans two kinds of state:
/// the session a prekey message created and what its X3DH used up and recorded.
public protocol ProtocolStore: SessionStore, IdentityKeyStore, PreKeyStore, SenderKeyStore {
    /// Atomically applies `consumption` to the prekeys (deletes the one-time prekey and the
    /// one-time KEM prekey it names, records EK_A under its signed prekey: see
    /// `LocalPreKeys.apply(_:)`) and stores `record` for `address`: either all of it happens or
    /// none.
    ///
    /// When a one-time prekey is no longer held (a concurrent decryption of another prekey
    /// message naming it committed first), nothing is stored and the call throws
    /// `unknownPreKey`: a one-time prekey creates at most one session.
    /// - Throws: `SessionError.unknownPreKey` as above, `SessionError.storage` when the
    ///   backend fails; in both cases nothing changed.
    func commitEstablishment(
        _ record: SessionRecord, for address: ProtocolAddress, applying consumption: PreKeyConsumption
    ) async throws(SessionError)
}
