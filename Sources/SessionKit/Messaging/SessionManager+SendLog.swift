import SignalPrimitives

/// The send log (SPEC §9): what this device sent, per recipient device and chain position, kept
/// for `sendLogPolicy` when the manager has a `sendLog`, so that the messages a peer could not
/// decrypt can be sent again in a new session.
extension SessionManager {
    /// The messages the send log holds for the sending chain of the most recently archived
    /// session with `address` (archived by a retry notice or by `applyDeviceListMismatch`), oldest
    /// first, removed from the log: the chain the device never answered on, so none of them is
    /// known to have been read. Call it once a new session with the device exists, and send
    /// them with `resendLoggedMessages(_:to:)`, for example after a device-list mismatch made
    /// you archive the session and fetch a new bundle. A retry notice returns these itself
    /// (`RetryNoticeOutcome.resend`), so this then returns nothing more.
    ///
    /// Only messages sent under the identity key of the current session are returned (SPEC §9:
    /// a logged message never crosses a change of the peer's key, whoever accepted it): after
    /// a relay made up a stale device and handed out a bundle under its own key, accepting that
    /// key gives it nothing the real device was sent. The others leave the log too. Empty
    /// without a send log, without an archived session, without a current session (the
    /// messages then stay), or when they expired.
    /// - Throws: `SessionError.damagedState(.session)` when the stored record does not load,
    ///   `.storage` when the store fails; nothing was removed then.
    public func takeLoggedMessages(ofArchivedSessionWith address: ProtocolAddress) async throws(SessionError) -> [SendLogEntry] {
        guard sendLog != nil else { return [] }
        return try await exclusive(.peer(address)) { () async throws(SessionError) -> [SendLogEntry] in
            guard let record = try await loadSession(for: address), let current = record.currentSession,
                  let archived = record.previousSessions.first(where: \.isArchived) else { return [] }
            let chain = SendLogChain.pairwise(recipient: address, ratchetKey: archived.ratchet.sendingRatchetKey.publicKey.rawRepresentation)
            let entries = try await loadSendLog(for: chain)
            guard !entries.isEmpty else { return [] }
            var commit = StoreCommit()
            commit.sendLog = sendLogChanges(removing: chain)
            try await commitWithSendLog(commit, reportingLogFailure: true)
            return entries.filter { $0.peerIdentityKey == current.remoteIdentityKey }
        }
    }

    /// Encrypts logged messages (`RetryNoticeOutcome.resend`, `takeLoggedMessages(ofArchivedSessionWith:)`)
    /// again to `address`, in its current session, one outcome per entry in order (as
    /// `encrypt(_:toDevices:)` reports them, with an envelope when it succeeded). A pairwise
    /// entry is sent only when the session's identity key is the one the message was first
    /// sent under (SPEC §9); otherwise its outcome is `SessionError.supersededIdentity` and
    /// nothing is sent: a device that comes back under a new key is a new party to the
    /// messages it never had, whoever accepted the key. A group entry (re-sent pairwise to a
    /// member after a group notice) has no such key and goes to the current session.
    /// Each sent message is logged again, on the new chain. Failures of `encrypt(_:to:)`
    /// (`noSession`, `untrustedIdentity`…) are in the outcomes.
    public func resendLoggedMessages(_ entries: [SendLogEntry], to address: ProtocolAddress) async -> [DeviceEncryption] {
        var outcomes: [DeviceEncryption] = []
        outcomes.reserveCapacity(entries.count)
        for entry in entries {
            let result: Result<[UInt8], SessionError>
            do throws(SessionError) {
                result = .success(try await encrypt(
                    entry.plaintext, to: address, contentType: .application, requiredIdentity: entry.peerIdentityKey))
            } catch {
                result = .failure(error)
            }
            outcomes.append(DeviceEncryption(from: localAddress, to: address, group: nil, result: result))
        }
        return outcomes
    }

    /// Removes every message the send log holds for the devices of `userID` (pairwise), so that
    /// none of them can be re-sent and their plaintexts are gone from the log's store: for a
    /// conversation the user deleted, or whose disappearing-message timer ran out. Nothing
    /// without a send log.
    /// - Throws: `SessionError.invalidAddress` for a user id that is not 1–255 UTF-8 bytes,
    ///   `.storage` when the log's store fails (nothing was removed then).
    public func forgetLoggedMessages(toUser userID: String) async throws(SessionError) {
        _ = try ProtocolAddress(userID: userID, deviceID: 0)
        try await discardLoggedMessages(ofUser: userID, notUnder: nil)
    }

    /// Removes every message the send log holds for `group` (the messages logged on our current
    /// sending chain there; a replaced chain's went with it): for a group conversation the user
    /// deleted, or whose timer ran out. Nothing without a send log or a chain.
    /// - Throws: `SessionError.damagedState(.senderKeySendingChain)` when the chain does not
    ///   load, `.storage` when the store fails (nothing was removed then).
    public func forgetLoggedMessages(inGroup group: GroupID) async throws(SessionError) {
        guard sendLog != nil else { return }
        try await exclusive(.groupSending(group)) { () async throws(SessionError) in
            guard let chain = try await loadSendingChain(for: group) else { return }
            var commit = StoreCommit()
            commit.sendLog = sendLogChanges(removing: .group(group, chainID: chain.chainID.rawRepresentation))
            try await commitWithSendLog(commit, reportingLogFailure: true)
        }
    }

    /// Removes `userID`'s pairwise entries sent under another key than `identityKey`, or all of
    /// them when it is `nil` (SPEC §9: accepting a new key discards what was logged under the
    /// old one). Nothing without a log.
    /// - Throws: `SessionError.storage` when the log's store fails.
    func discardLoggedMessages(ofUser userID: String, notUnder identityKey: Ed25519.PublicKey?) async throws(SessionError) {
        guard sendLog != nil else { return }
        var changes = SendLogChanges()
        changes.removedPeers = [SendLogPeerKeep(userID: userID, keeping: identityKey)]
        changes.expiringAt = clock.now()
        var commit = StoreCommit()
        commit.sendLog = changes
        try await commitWithSendLog(commit, reportingLogFailure: true)
    }

    // MARK: Helpers

    /// The send log's changes for a message sent with `plaintext` at `position` of `chain`
    /// (expired entries go in the same write), or `nil` without a send log.
    func sendLogChanges(
        logging plaintext: [UInt8], on chain: SendLogChain, at position: UInt64, peerIdentityKey: Ed25519.PublicKey? = nil
    ) -> SendLogChanges? {
        guard sendLog != nil else { return nil }
        let now = clock.now()
        var changes = SendLogChanges()
        changes.added = [SendLogEntry(
            id: 0, chain: chain, position: UInt32(truncatingIfNeeded: position), expiresAt: now.adding(seconds: sendLogPolicy.retention),
            plaintext: plaintext, peerIdentityKey: peerIdentityKey)]
        changes.expiringAt = now
        changes.maximumEntries = sendLogPolicy.maximumEntries
        return changes
    }

    /// The send log's changes that remove `chain`'s entries (and expired ones), or `nil` without
    /// a send log.
    func sendLogChanges(removing chain: SendLogChain) -> SendLogChanges? {
        guard sendLog != nil else { return nil }
        var changes = SendLogChanges()
        changes.removedChains = [chain]
        changes.expiringAt = clock.now()
        return changes
    }

    /// The unexpired entries of `chain`, oldest first (none without a send log).
    /// - Throws: `SessionError.storage` when the log's store fails.
    func loadSendLog(for chain: SendLogChain) async throws(SessionError) -> [SendLogEntry] {
        guard let sendLog else { return [] }
        return try await sendLog.loadSendLog(for: chain, now: clock.now())
    }

    /// Commits `commit` with its send-log changes: in the same transaction when the log is the
    /// store and takes them in commits, otherwise with `SendLogStore.applySendLog(_:)` right after
    /// the commit. A failure of that second write is reported only with `reportingLogFailure`
    /// (the state is committed either way; a message whose entry was not written was still
    /// sent, and only its copy is missing).
    /// - Throws: the errors of `ProtocolStore.commit(_:)`.
    func commitWithSendLog(_ commit: StoreCommit, reportingLogFailure: Bool = false) async throws(SessionError) {
        guard let changes = commit.sendLog, let sendLog, !sendLogInCommits else {
            try await store.commit(commit)
            return
        }
        var stateOnly = commit
        stateOnly.sendLog = nil
        try await store.commit(stateOnly)
        do throws(SessionError) {
            try await sendLog.applySendLog(changes)
        } catch {
            if reportingLogFailure { throw error }
        }
    }
}
