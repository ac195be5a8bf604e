import SignalPrimitives

/// The send log (SPEC §9): what this device sent, per recipient device and chain position, kept
/// for `sendLogPolicy` when the manager has a `sendLog`, so that the messages a peer could not
/// decrypt can be sent again in a new session.
extension SessionManager {
    /// The messages the send log holds for the sending chain of the most recently archived
    /// session with `address` (archived by a retry notice or by `applyDeviceListMismatch`), oldest
    /// first, removed from the log: the chain the device never answered on, so none of them is
    /// known to have been read. Call it once a new session with the device exists and encrypt
    /// each again (`encrypt(_:to:)`), for example after a device-list mismatch made you archive
    /// the session and fetch a new bundle. A retry notice returns these itself
    /// (`RetryNoticeOutcome.resend`), so this then returns nothing more. Empty without a send
    /// log, without an archived session, or when they expired. Take them before accepting a
    /// key change for the device's user: `acceptIdentityChange(_:forUser:)` drops the sessions
    /// under the old key, and their entries can then only expire.
    /// - Throws: `SessionError.damagedState(.session)` when the stored record does not load,
    ///   `.storage` when the store fails; nothing was removed then.
    public func takeLoggedMessages(ofArchivedSessionWith address: ProtocolAddress) async throws(SessionError) -> [SendLogEntry] {
        guard sendLog != nil else { return [] }
        return try await exclusive(.peer(address)) { () async throws(SessionError) -> [SendLogEntry] in
            guard let archived = try await loadSession(for: address)?.previousSessions.first(where: \.isArchived) else { return [] }
            let chain = SendLogChain.pairwise(recipient: address, ratchetKey: archived.ratchet.sendingRatchetKey.publicKey.rawRepresentation)
            let entries = try await loadSendLog(for: chain)
            guard !entries.isEmpty else { return [] }
            var commit = StoreCommit()
            commit.sendLog = sendLogChanges(removing: chain)
            try await commitWithSendLog(commit, reportingLogFailure: true)
            return entries
        }
    }

    // MARK: Helpers

    /// The send log's changes for a message sent with `plaintext` at `position` of `chain`
    /// (expired entries go in the same write), or `nil` without a send log.
    func sendLogChanges(logging plaintext: [UInt8], on chain: SendLogChain, at position: UInt64) -> SendLogChanges? {
        guard sendLog != nil else { return nil }
        let now = clock.now()
        var changes = SendLogChanges()
        changes.added = [SendLogEntry(
            id: 0, chain: chain, position: UInt32(truncatingIfNeeded: position), expiresAt: now.adding(seconds: sendLogPolicy.retention),
            plaintext: plaintext)]
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
