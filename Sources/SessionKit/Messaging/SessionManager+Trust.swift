import SignalPrimitives

/// Trust per user (SPEC §7; `IdentityTrustEvaluator`): what the manager asks the trust
/// evaluator, what it records, which messages it quarantines or refuses, and the app's
/// acceptance of a changed key.
///
/// - The local user's own devices must present the local identity key (a user's devices share
///   it): any other key is `ownDeviceIdentityMismatch`, whatever the evaluator says. They never
///   reach the evaluator: a session with an own device not seen before reports `newDevice`.
/// - A contact's key is the user's: a device with the user's key inherits its status; another
///   key is a change whatever the device id.
/// - A message under a key other than the user's on record is quarantined (returned marked,
///   nothing recorded, its session never made current) when the user is verified, or when it
///   did not start a new session (an older session under another key). A prekey message that
///   starts a session under a changed key of a user who is not verified records the change
///   (trust on first use: the app asks the user before anything is sent again).
/// - A message under a superseded key (replaced by a key the app accepted) is refused.
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
    /// change, or a quarantined message's `senderIdentityKey`): the trust evaluator trusts it
    /// and supersedes the user's former key, and every session with a device of that user under
    /// another key is retired (deleted), so that neither an old device nor a stolen old state
    /// can revive one; a message under the superseded key is refused from now on
    /// (`SessionError.supersededIdentity`). Sessions under `identityKey` stay, and the most
    /// recent of a device's becomes its current session where the current one was retired.
    /// Devices whose sessions all went need a new bundle (`noSession`). The send log's
    /// messages to the user's devices under another key are discarded: they are never re-sent
    /// to the device under the accepted key (SPEC §9).
    /// - Throws: `SessionError.invalidAddress` for a user id that is not 1–255 UTF-8 bytes,
    ///   `.invalidConfiguration` for the local user's own id (its key is the local identity
    ///   key, never accepted), `.untrustedIdentity` when the user's key changed again since the
    ///   app asked (a change to another key awaits acceptance: ask about that one; nothing
    ///   changed), `.storage` when the trust evaluator or the store fails (the
    ///   call can be repeated: what it did stays done), `.damagedState(.session)` when a
    ///   stored session does not load.
    public func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws(SessionError) {
        let probe = try ProtocolAddress(userID: userID, deviceID: 0)
        guard !probe.isSameUser(as: localAddress) else {
            throw .invalidConfiguration("the local user's identity key is the local identity key; it is never accepted")
        }
        do {
            try await trust.acceptIdentity(identityKey, forUser: userID)
        } catch let error as SessionError {
            throw error
        } catch {
            throw .storage("trust evaluator: \(error)")
        }
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
        guard case .changed = decision.observation else {
            return IdentityOutcome(
                observation: decision.observation, isQuarantined: false,
                recordsKey: recordsIdentity(decision.observation, for: address))
        }
        if decision.isVerified || !decryption.establishedSession {
            return IdentityOutcome(observation: decision.observation, isQuarantined: true, recordsKey: false)
        }
        return IdentityOutcome(observation: decision.observation, isQuarantined: false, recordsKey: true)
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
