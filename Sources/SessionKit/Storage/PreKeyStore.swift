import SignalPrimitives

/// Where this device's own prekeys (`LocalPreKeys`) live, with their EK_A replay records
/// (`BaseKeyRecord`).
///
/// One-time prekeys and one-time KEM prekeys are deleted, and EK_A recorded, only through
/// `ProtocolStore.commit(_:)` (`StoreCommit.applyPreKeyChanges(to:)` and
/// `StoreCommit.baseKeyRecord`), atomically with the session they created; every other
/// change goes through `updatePreKeys`, an atomic read-modify-write, so that upkeep running
/// next to a prekey-message decryption can neither resurrect a consumed prekey nor lose a new one.
///
/// The replay records are kept apart from the `LocalPreKeys` value (which only counts them
/// per signed prekey, for the cap of `ProtocolLimits.maximumRecordedBaseKeys`), so that a
/// prekey message looks one up and adds one without reading or rewriting the others: keep
/// them where one lookup and one insertion cost the same whatever their number (a set, an
/// indexed table). A store that persisted `LocalPreKeys` blobs of version 2 (records inside)
/// loads them once with `LocalPreKeys.upgrading(serialized:)` and keeps the records it returns.
public protocol PreKeyStore: Sendable {
    /// The prekeys, or `nil` when none were generated yet.
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadPreKeys() async throws(SessionError) -> LocalPreKeys?

    /// Runs `update` on the stored prekeys (`nil` when none were generated yet) and stores what
    /// it leaves, atomically with respect to every other call on the store, deleting in the
    /// same write the replay records of every signed prekey the update removed or replaced
    /// (`LocalPreKeys.signedPreKeyIDsRemoved(in:)`: SPEC §3 deletes a record with its signed
    /// prekey). When `update` throws, nothing is stored and its error is rethrown.
    /// - Throws: the error of `update`, or `SessionError.storage` when the backend fails (then
    ///   nothing changed).
    func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) async throws(SessionError) -> Result

    /// Whether the EK_A replay record of `baseKey` under the signed prekey `signedPreKeyID` is
    /// held: X3DH already completed with that EK_A and that signed prekey, so a prekey message
    /// carrying them again is a replay (`SessionError.duplicateMessage`, SPEC §3). Records are
    /// added by `ProtocolStore.commit(_:)` (`StoreCommit.baseKeyRecord`) and deleted with their
    /// signed prekey by `updatePreKeys(_:)`. Answer it without reading the other records.
    /// - Throws: `SessionError.storage` when the backend fails.
    func hasRecordedBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) async throws(SessionError) -> Bool
}

extension PreKeyStore {
    /// What a prekey message with `prefix` needs, as far as it is held: the signed prekey
    /// `prefix.signedPreKeyID`, the one-time prekey and the KEM prekey it names, and, when that
    /// signed prekey is held, whether its EK_A is recorded under it (one lookup,
    /// `hasRecordedBaseKey(_:signedPreKeyID:)`).
    /// - Throws: the errors of `loadPreKeys()` and `hasRecordedBaseKey(_:signedPreKeyID:)`.
    func preKeys(for prefix: PreKeyMessage.Prefix) async throws(SessionError) -> PreKeySet {
        guard let keys = try await loadPreKeys() else { return PreKeySet() }
        return try await preKeySet(for: prefix, in: keys)
    }

    /// `preKeys(for:)`, with the signed prekey marked as refusing classic messages when the
    /// prefix has no KEM part and the key is past its window at `now` under `policy`
    /// (`LocalPreKeys.refusesClassicPreKeyMessages(signedPreKeyID:now:policy:)`).
    /// - Throws: the errors of `preKeys(for:)`.
    func preKeys(for prefix: PreKeyMessage.Prefix, now: Timestamp, policy: PreKeyPolicy) async throws(SessionError) -> PreKeySet {
        guard let keys = try await loadPreKeys() else { return PreKeySet() }
        var set = try await preKeySet(for: prefix, in: keys)
        if prefix.kem == nil, keys.refusesClassicPreKeyMessages(signedPreKeyID: prefix.signedPreKeyID, now: now, policy: policy) {
            set.refuseClassicPreKeyMessages(signedPreKeyID: prefix.signedPreKeyID)
        }
        return set
    }

    /// The keys of `keys` a prekey message with `prefix` needs, and its replay record when
    /// the signed prekey is held and the store holds the record.
    private func preKeySet(for prefix: PreKeyMessage.Prefix, in keys: LocalPreKeys) async throws(SessionError) -> PreKeySet {
        var set = keys.preKeySet(for: prefix)
        if set.signedPreKey(id: prefix.signedPreKeyID) != nil,
           try await hasRecordedBaseKey(prefix.baseKey, signedPreKeyID: prefix.signedPreKeyID) {
            set.recordBaseKey(prefix.baseKey, signedPreKeyID: prefix.signedPreKeyID)
        }
        return set
    }
}

extension LocalPreKeys {
    /// The keys a prekey message with `prefix` needs (the replay record is the store's).
    func preKeySet(for prefix: PreKeyMessage.Prefix) -> PreKeySet {
        var set = PreKeySet()
        if let key = signedPreKey(id: prefix.signedPreKeyID) { set.insert(key) }
        if let id = prefix.oneTimePreKeyID, let key = oneTimePreKey(id: id) { set.insert(key) }
        if let id = prefix.kem?.preKeyID, let key = kemPreKey(id: id) { set.insert(key) }
        return set
    }

    /// Every key held, and `records`, as a lookup for a prekey message (tests, and code that
    /// decrypts with prekeys it holds in memory).
    @_spi(Testing) public func lookup(recording records: some Sequence<BaseKeyRecord> = [BaseKeyRecord]()) -> PreKeySet {
        var set = PreKeySet(
            signedPreKeys: signedPreKeyEntries.map(\.key), oneTimePreKeys: oneTimePreKeys,
            kemPreKeys: oneTimeKEMPreKeys + signedPreKeyEntries.compactMap(\.lastResortKEMPreKey))
        for record in records { set.recordBaseKey(record.baseKey, signedPreKeyID: record.signedPreKeyID) }
        return set
    }
}
