/// Where this device's own prekeys (`LocalPreKeys`) live.
///
/// One-time prekeys are deleted only through `ProtocolStore.commitEstablishment`, atomically
/// with the session they created; every other change goes through `updatePreKeys`, an atomic
/// read-modify-write, so that upkeep running next to a prekey-message decryption can neither
/// resurrect a consumed one-time prekey nor lose a new one.
public protocol PreKeyStore: Sendable {
    /// The signed prekey `signedPreKeyID` and the one-time prekey `oneTimePreKeyID` (when not
    /// `nil`), as far as they are held: what a prekey message naming them needs.
    /// - Throws: `SessionError.storage` when the backend fails.
    func preKeys(signedPreKeyID: UInt32, oneTimePreKeyID: UInt32?) async throws(SessionError) -> PreKeySet

    /// The prekeys, or `nil` when none were generated yet.
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadPreKeys() async throws(SessionError) -> LocalPreKeys?

    /// Runs `update` on the stored prekeys (`nil` when none were generated yet) and stores what
    /// it leaves, atomically with respect to every other call on the store. When `update`
    /// throws, nothing is stored and its error is rethrown.
    /// - Throws: the error of `update`, or `SessionError.storage` when the backend fails (then
    ///   nothing changed).
    func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) async throws(SessionError) -> Result
}
