/// Where this device's own prekeys (`LocalPreKeys`) live, with their EK_A replay records.
///
/// One-time prekeys and one-time KEM prekeys are deleted, and EK_A recorded, only through
/// `ProtocolStore.commit(_:)` (`StoreCommit.applyPreKeyChanges(to:)`), atomically with the
/// session they created; every other
/// change goes through `updatePreKeys`, an atomic read-modify-write, so that upkeep running
/// next to a prekey-message decryption can neither resurrect a consumed prekey nor lose a new one.
public protocol PreKeyStore: Sendable {
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

extension PreKeyStore {
    /// What a prekey message with `prefix` needs, as far as it is held: the signed prekey
    /// `prefix.signedPreKeyID`, the one-time prekey and the KEM prekey it names, and whether
    /// its EK_A is recorded under that signed prekey.
    /// - Throws: the errors of `loadPreKeys()`.
    func preKeys(for prefix: PreKeyMessage.Prefix) async throws(SessionError) -> PreKeySet {
        (try await loadPreKeys())?.preKeySet(for: prefix) ?? PreKeySet()
    }

    /// `preKeys(for:)`, with the signed prekey marked as refusing classic messages when the
    /// prefix has no KEM part and the key is past its window at `now` under `policy`
    /// (`LocalPreKeys.refusesClassicPreKeyMessages(signedPreKeyID:now:policy:)`).
    /// - Throws: the errors of `loadPreKeys()`.
    func preKeys(for prefix: PreKeyMessage.Prefix, now: Timestamp, policy: PreKeyPolicy) async throws(SessionError) -> PreKeySet {
        guard let keys = try await loadPreKeys() else { return PreKeySet() }
        var set = keys.preKeySet(for: prefix)
        if prefix.kem == nil, keys.refusesClassicPreKeyMessages(signedPreKeyID: prefix.signedPreKeyID, now: now, policy: policy) {
            set.refuseClassicPreKeyMessages(signedPreKeyID: prefix.signedPreKeyID)
        }
        return set
    }
}

extension LocalPreKeys {
    /// The keys and the replay record a prekey message with `prefix` needs.
    func preKeySet(for prefix: PreKeyMessage.Prefix) -> PreKeySet {
        var set = PreKeySet()
        if let key = signedPreKey(id: prefix.signedPreKeyID) {
            set.insert(key)
            if hasRecordedBaseKey(prefix.baseKey, signedPreKeyID: key.id) {
                set.recordBaseKey(prefix.baseKey, signedPreKeyID: key.id)
            }
        }
        if let id = prefix.oneTimePreKeyID, let key = oneTimePreKey(id: id) { set.insert(key) }
        if let id = prefix.kem?.preKeyID, let key = kemPreKey(id: id) { set.insert(key) }
        return set
    }
}
