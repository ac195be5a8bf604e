/// Everything a `SessionManager` stores, plus the one write that spans two kinds of state:
/// the session a prekey message created and the one-time prekey it consumed.
public protocol ProtocolStore: SessionStore, IdentityKeyStore, PreKeyStore, SenderKeyStore {
    /// Atomically deletes the one-time prekey `oneTimePreKeyID` (when not `nil`) and stores
    /// `record` for `address`: either both happen or neither.
    ///
    /// When the one-time prekey is no longer held (a concurrent decryption of another prekey
    /// message naming it committed first), nothing is stored and the call throws
    /// `unknownPreKey`: a one-time prekey creates at most one session.
    /// - Throws: `SessionError.unknownPreKey` as above, `SessionError.storage` when the
    ///   backend fails; in both cases nothing changed.
    func commitEstablishment(
        _ record: SessionRecord, for address: ProtocolAddress, consumingOneTimePreKey oneTimePreKeyID: UInt32?
    ) async throws(SessionError)
}
