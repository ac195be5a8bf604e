import SignalPrimitives

/// Trust per user (SPEC §7; `IdentityTrustEvaluator`): what the manager asks the trust
/// evaluator, what it records, which messages it quarantines or refuses, and the app's
/// acceptance of a changed key.
///
/// - The local user's own devices must present the local identity key (a user's devices share
///   it): any other key is `ownDeviceIdentityMismatch`, whatever the evaluator says. They never
///   reach the evaluator: a session with an own device not seen before reports `newDevice`.
/// - A contact's key is the user's: a device with the user's key inherits its status; another
///   key on a device the trust record lists is a change of the user's key; another key on a
///   device id the record does not list, while it lists devices, is not
///   (`IdentityObservation.unknownDeviceWithOtherKey`): the user's devices still present the
///   recorded key, so the record is left alone and sending to them goes on.
/// - A message under a key other than the user's on record is quarantined (returned marked,
///   nothing recorded, its session never made current) when the user is verified, when it
///   came from a device id the record does not list, when its key is the one a pending change
///   would replace, or when it did not start a new session (an older session under another
///   key). A prekey message from a listed device that starts a session under a changed key of
///   a user who is not verified records the change (trust on first use: the app asks the user
///   before anything is sent again, and may accept either key or reject the change).
/// - A message under a superseded key (replaced by a change the app accepted) is refused.
extension SessionManager {
    /// What the manager concluded about the identity key of a decrypted message.
    struct IdentityOutcome: Sendable {
        /// What the evaluator observed.
        let observation: IdentityObservation
        /// Whether the message is shown as quarantined (see `DecryptedMessage.isQuarantined`);
        /// its session then never becomes (or stays) current.
        let isQuarantined: Bool
        /// Whether the key is recorded with the commit (first use, a new device, a change that
        /// started a session for a user who is not verified).
        let recordsKey: Bool
    }

    /// Accepts `identityKey` as the key of the user `userID` after the app asked the user (a key
    /// change, or a quarantined message's `senderIdentityKey`): the trust evaluator trusts it,
    /// and every session with a device of that user under another key is retired (deleted), so
    /// that neither an old device nor a stolen old state can revive one. While a change awaits
    /// acceptance either key may be accepted: the new key supersedes the one it replaced (a
    /// message under that one is refused from now on, `SessionError.supersededIdentity`); the
    /// key it would replace is restored, as `rejectIdentityChange(forUser:)` does. A quarantined
    /// message's key (`IdentityObservation.unknownDeviceWithOtherKey`, such as a contact who
    /// reinstalled under a new device id, or a verified contact's new key) replaces the user's
    /// without superseding it: if the user's listed devices still present the old key, their
    /// messages are reported (quarantined, or a change), never silently refused. Accept such a
    /// key only once the user confirmed it with the contact. Sessions under `identityKey`
    /// stay, and the most recent of a device's becomes its current session where none is
    /// current any more (a quarantined message's session was never made current). Devices
    /// whose sessions all went need a new bundle (`noSession`). The send log's messages to the
    /// user's devices under another key are discarded: they are never re-sent to the device
    /// under the accepted key (SPEC §9).
    /// - Throws: `SessionError.invalidAddress` for a user id that is not 1–255 UTF-8 bytes,
    ///   `.invalidConfiguration` for the local user's own id (its key is the local identity
    ///   key, never accepted), `.untrustedIdentity` when the user's key changed again since the
    ///   app asked (a change to a third key awaits acceptance: ask about that one; nothing
    ///   changed), `.storage` when the trust evaluator or the store fails (the
    ///   call can be repeated: what it did stays done), `.damagedState(.session)` when a
    ///   stored session does not load.
    public func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws(SessionError) {
        try requireContact(userID)
        do {
            try await trust.acceptIdentity(identityKey, forUser: userID)
        } catch let error as SessionError {
            throw error
        } catch {
            throw .storage("trust evaluator: \(error)")
        }
        try await retireSessions(ofUser: userID, notUnder: identityKey)
    }

    /// Rejects the change of the user `userID`'s key that awaits acceptance, after the app asked
    /// the user (who does not recognise the new key): the trust evaluator restores the key the
    /// change would replace (sending to the user's devices is allowed again) and drops the
    /// pending key, and every session with a device of that user under another key is retired,
    /// as `acceptIdentityChange(_:forUser:)` does for the restored key. The pending key is not
    /// superseded: a message under it again is reported again. Nothing changes for a user
    /// without a pending change (or without a record).
    /// - Throws: `SessionError.invalidAddress` for a user id that is not 1–255 UTF-8 bytes,
    ///   `.invalidConfiguration` for the local user's own id, or when the trust evaluator does
    ///   not implement `rejectIdentity(forUser:)`, `.storage` when the trust evaluator or the
    ///   store fails (the call can be repeated), `.damagedState(.session)` when a stored
    ///   session does not load.
    public func rejectIdentityChange(forUser userID: String) async throws(SessionError) {
        try requireContact(userID)
        let restored: Ed25519.PublicKey?
        do {
            restored = try await trust.rejectIdentity(forUser: userID)
        } catch let error as SessionError {
            throw error
        } catch {
            throw .storage("trust evaluator: \(error)")
        }
        guard let restored else { return }
        try await retireSessions(ofUser: userID, notUnder: restored)
    }

    /// Throws unless `userID` is a valid user id other than the local user's.
    private func requireContact(_ userID: String) throws(SessionError) {
        let probe = try ProtocolAddress(userID: userID, deviceID: 0)
        guard !probe.isSameUser(as: localAddress) else {
            throw .invalidConfiguration("the local user's identity key is the local identity key; it is never accepted")
        }
    }

    /// Retires every session with a device of `userID` under a key other than `identityKey`
    /// (the most recent remaining one of a device becomes current where none is), and discards
    /// the send log's messages to the user under other keys.
    private func retireSessions(ofUser userID: String, notUnder identityKey: Ed25519.PublicKey) async throws(SessionError) {
        for device in try await store.deviceIDs(ofUser: userID) {
            let address = try ProtocolAddress(userID: userID, deviceID: device)
            try await exclusive(.peer(address)) { () async throws(SessionError) in
                try await retryingStaleState { () async throws(SessionError) in
                    guard var record = try await loadSession(for: address),
                          record.retainSessions(withRemoteIdentity: identityKey) else { return }
                    var commit = StoreCommit()
                    commit.store(record, for: address)
                    try await store.commit(commit)
                }
            }
        }
        // What was logged for the user under the old key is never re-sent (SPEC §9).
        try await discardLoggedMessages(ofUser: userID, notUnder: identityKey)
    }

    /// The trust decision for `identityKey` on `address`. The local user's devices are checked
    /// against the local identity key here and never reach the evaluator (`knownDevice`: a
    /// session with the device was stored before, else it is reported as `newDevice`).
    /// - Throws: `SessionError.ownDeviceIdentityMismatch` for an own device under another key,
    ///   `.storage` when the evaluator fails.
    func identityDecision(
        _ identityKey: Ed25519.PublicKey, for address: ProtocolAddress, knownDevice: Bool
    ) async throws(SessionError) -> TrustDecision {
        guard address.isSameUser(as: localAddress) else { return try await trustDecision(identityKey, for: address) }
        let identity = try await localIdentity()
        guard identityKey == identity.publicKey else { throw .ownDeviceIdentityMismatch }
        return TrustDecision(observation: knownDevice ? .unchanged : .newDevice, allowsSending: true)
    }

    /// Whether a session or message under `observation` records its key with the commit: a
    /// contact's first key or new device (a change is recorded only by `identityOutcome`).
    func recordsIdentity(_ observation: IdentityObservation, for address: ProtocolAddress) -> Bool {
        guard !address.isSameUser(as: localAddress) else { return false }
        return observation == .firstUse || observation == .newDevice
    }

    /// What to do with a decrypted message's identity key (see the extension's documentation).
    /// - Throws: `SessionError.supersededIdentity` for a superseded key,
    ///   `.ownDeviceIdentityMismatch`, `.storage` when the evaluator fails.
    func identityOutcome(
        of decryption: SessionRecord.Decryption, from address: ProtocolAddress, knownDevice: Bool
    ) async throws(SessionError) -> IdentityOutcome {
        let decision = try await identityDecision(decryption.remoteIdentityKey, for: address, knownDevice: knownDevice)
        if decision.isSuperseded { throw .supersededIdentity }
        switch decision.observation {
        case .unknownDeviceWithOtherKey:
            // Not a change of the user's key: the record stays, the user's devices keep receiving.
            return IdentityOutcome(observation: decision.observation, isQuarantined: true, recordsKey: false)
        case .changed:
            if decision.isVerified || !decryption.establishedSession || decision.isKeyBeforePendingChange {
                return IdentityOutcome(observation: decision.observation, isQuarantined: true, recordsKey: false)
            }
            return IdentityOutcome(observation: decision.observation, isQuarantined: false, recordsKey: true)
        case .firstUse, .unchanged, .newDevice:
            return IdentityOutcome(
                observation: decision.observation, isQuarantined: false,
                recordsKey: recordsIdentity(decision.observation, for: address))
        }
    }

    /// Asks the trust evaluator about `identityKey` (which records nothing).
    func trustDecision(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(SessionError) -> TrustDecision {
        do {
            return try await trust.evaluateIdentity(identityKey, for: address)
        } catch {
            throw .storage("trust evaluator: \(error)")
        }
    }

    /// `identityDecision(_:for:knownDevice: true)` for each (key, address) pair, in order, the
    /// contacts' in one call to the evaluator (`evaluateIdentities`); `nil` for a pair that
    /// fails (an own device under another key; every contact's when the evaluator fails).
    func identityDecisions(_ queries: [(Ed25519.PublicKey, ProtocolAddress)]) async -> [TrustDecision?] {
        var decisions = [TrustDecision?](repeating: nil, count: queries.count)
        var contacts: [(identityKey: Ed25519.PublicKey, address: ProtocolAddress)] = []
        var contactIndices: [Int] = []
        for (index, (key, address)) in queries.enumerated() {
            if address.isSameUser(as: localAddress) {
                decisions[index] = try? await identityDecision(key, for: address, knownDevice: true)
            } else {
                contacts.append((key, address))
                contactIndices.append(index)
            }
        }
        guard !contacts.isEmpty, let answers = try? await trust.evaluateIdentities(contacts), answers.count == contacts.count else {
            return decisions
        }
        for (index, answer) in zip(contactIndices, answers) { decisions[index] = answer }
        return decisions
    }

    /// Records `identityKey` with the trust evaluator, after the operation that saw it succeeded.
    func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(SessionError) -> IdentityObservation {
        do {
            return try await trust.recordIdentity(identityKey, for: address)
        } catch {
            throw .storage("trust evaluator: \(error)")
        }
    }
}
