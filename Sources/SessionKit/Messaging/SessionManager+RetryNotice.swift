import SignalPrimitives

/// Recovery, the sending side (SPEC §9): a retry notice from a device that could not decrypt a
/// message from this one.
extension SessionManager {
    /// Processes a retry notice that the transport says came from `sender` (`receive(_:)` does
    /// this for an envelope of kind `.retryNotice`), in SPEC §9's order:
    ///
    /// 1. the notice's own checks (`RetryNotice`): type byte, lengths, kind and registration id,
    ///    that it names `sender` and this device, IK_B's point, the MAC; a failure is thrown;
    /// 2. IK_B against the trust record for `sender`: a changed key is reported
    ///    (`RetryNoticeOutcome.Action.untrustedIdentity`) and nothing is done; a superseded key
    ///    is refused (`supersededIdentity`); a device of the local user must present the local
    ///    identity key (`ownDeviceIdentityMismatch`); without a record the key is accepted and
    ///    nothing is recorded;
    /// 3. a pairwise notice whose ratchet key is the one this device sends on now with `sender`
    ///    (the DHs of the current session) archives that session (`sessionArchived`; it still
    ///    decrypts late messages, never becomes current again, and the next message needs a new
    ///    bundle: `encrypt` is `noSession` until then); any other ratchet key changes no session
    ///    (this device has moved on, which makes a replayed notice inert), but the messages the
    ///    send log holds for the chain it names are handed back all the same
    ///    (`loggedMessagesReturned`: the sender may have started a new session before its
    ///    notice arrived), once: they leave the log, so a replay gets nothing (`ignored`);
    ///    in both cases only messages sent under the notice's identity key are handed back;
    /// 4. a group notice for the chain this device still sends on in that group, from a member
    ///    of it, encrypts the current distribution to `sender` again (`distributionResent`);
    ///    otherwise nothing.
    ///
    /// Steps 3 and 4 act at most once per hour per peer device (`rateLimited` until then; the
    /// time is kept in the device's record, so it holds across restarts). A forged, replayed,
    /// re-attributed or re-addressed notice changes nothing.
    /// - Throws: `SessionError.unsupportedVersion`, `.invalidMessage` or `.invalidKey` for a
    ///   notice that fails its checks, `.supersededIdentity`, `.ownDeviceIdentityMismatch`,
    ///   `.storage` or `.damagedState` when the store or the trust evaluator fails; nothing
    ///   changed then.
    public func processRetryNotice(_ bytes: [UInt8], from sender: ProtocolAddress) async throws(SessionError) -> RetryNoticeOutcome {
        let identity = try await localIdentity()
        let localAddress = localAddress
        let notice = try await Self.compute { () throws(SessionError) -> RetryNotice in
            try RetryNotice(verifying: bytes, from: sender, localAddress: localAddress, identity: identity)
        }
        let group: GroupID? = if case let .group(group, _, _) = notice.failure { group } else { nil }
        let failedPosition: UInt32
        switch notice.failure {
        case let .pairwise(_, counter): failedPosition = counter
        case let .group(_, _, iteration): failedPosition = iteration
        }
        func outcome(_ action: RetryNoticeOutcome.Action, resend: [SendLogEntry] = []) -> RetryNoticeOutcome {
            RetryNoticeOutcome(
                sender: sender, group: group, registrationID: notice.registrationID, action: action, resend: resend,
                failedPosition: failedPosition)
        }
        let decision = try await identityDecision(notice.senderIdentityKey, for: sender, knownDevice: true)
        if decision.isSuperseded { throw .supersededIdentity }
        switch decision.observation {
        case .changed, .unknownDeviceWithOtherKey: return outcome(.untrustedIdentity(notice.senderIdentityKey))
        case .firstUse, .unchanged, .newDevice: break
        }
        switch notice.failure {
        case let .pairwise(ratchetKey, _):
            let (action, resend) = try await archiveSession(with: sender, sendingOn: ratchetKey, notice: notice)
            return outcome(action, resend: resend)
        case let .group(group, chainID, iteration):
            let (action, resend) = try await redistribute(group, chain: chainID, from: iteration, to: sender)
            return outcome(action, resend: resend)
        }
    }

    /// Step 3: archives the current session with `sender` when it sends on `ratchetKey`, and
    /// takes the messages logged on that chain out of the send log in the same commit.
    private func archiveSession(
        with sender: ProtocolAddress, sendingOn ratchetKey: [UInt8], notice: RetryNotice
    ) async throws(SessionError) -> (RetryNoticeOutcome.Action, [SendLogEntry]) {
        try await exclusive(.peer(sender)) { () async throws(SessionError) -> (RetryNoticeOutcome.Action, [SendLogEntry]) in
            try await retryingStaleState { () async throws(SessionError) -> (RetryNoticeOutcome.Action, [SendLogEntry]) in
                // Under the peer lock, so no message is logged on the chain meanwhile.
                let chain = SendLogChain.pairwise(recipient: sender, ratchetKey: ratchetKey)
                // A message sent under another identity key than the notice's is never handed
                // back (SPEC §9): it leaves the log with the others.
                let logged = try await loadSendLog(for: chain)
                let handedBack = logged.filter { $0.peerIdentityKey == notice.senderIdentityKey }
                guard var record = try await loadSession(for: sender), let current = record.currentSession,
                      current.ratchet.sendingRatchetKey.publicKey.rawRepresentation == ratchetKey else {
                    // Another chain: no session changes, but what was logged on the chain the
                    // notice names goes back, once (the sender's new session may predate it).
                    guard !logged.isEmpty else { return (.ignored, []) }
                    var commit = StoreCommit()
                    commit.sendLog = sendLogChanges(removing: chain)
                    try await commitWithSendLog(commit, reportingLogFailure: true)
                    return handedBack.isEmpty ? (.ignored, []) : (.loggedMessagesReturned, handedBack)
                }
                let now = clock.now()
                guard record.recoveryMarks.allowsAction(at: now) else { return (.rateLimited, []) }
                record.archiveCurrentSessionForRetryNotice()
                record.recoveryMarks.recordAction(at: now)
                var commit = StoreCommit()
                commit.store(record, for: sender)
                if !logged.isEmpty { commit.sendLog = sendLogChanges(removing: chain) }
                try await commitWithSendLog(commit)
                let reregistered = current.remoteRegistrationID.map { $0 != notice.registrationID } ?? false
                return (.sessionArchived(peerReregistered: reregistered), handedBack)
            }
        }
    }

    /// Step 4: encrypts the current distribution of `group` to `sender` again when this device
    /// still sends on `chainID` there and `sender` is a member, and returns the messages logged
    /// on the chain from iteration max(`iteration`, j) on and before the distribution's
    /// iteration, j being the sender's join point in the chain (SPEC §9: what was sent before it
    /// was a member is never re-sent to it, and without a join point nothing is): the ones the
    /// distribution cannot decrypt (it holds the chain key at its own iteration only).
    private func redistribute(
        _ group: GroupID, chain chainID: [UInt8], from iteration: UInt32, to sender: ProtocolAddress
    ) async throws(SessionError) -> (RetryNoticeOutcome.Action, [SendLogEntry]) {
        let (action, distributed) = try await redistribute(group, chain: chainID, to: sender)
        guard case .distributionResent = action, let distributed else { return (action, []) }
        guard let joined = try await loadGroupJoinPoints(for: group)[sender], joined.chainID == chainID else { return (action, []) }
        let first = max(UInt64(iteration), joined.iteration)
        let logged = try await loadSendLog(for: .group(group, chainID: chainID))
        return (action, logged.filter { UInt64($0.position) >= first && UInt64($0.position) < UInt64(distributed) })
    }

    /// Step 4's distribution, with the iteration of the distribution sent.
    private func redistribute(
        _ group: GroupID, chain chainID: [UInt8], to sender: ProtocolAddress
    ) async throws(SessionError) -> (RetryNoticeOutcome.Action, UInt32?) {
        guard let chain = try await loadSendingChain(for: group), chain.chainID.rawRepresentation == chainID,
              try await loadGroupMembers(for: group).contains(sender) else {
            return (.ignored, nil)
        }
        // The hourly limit is noted in the sender's record first (under its lock, which
        // encrypting the distribution takes again).
        let allowed = try await exclusive(.peer(sender)) { () async throws(SessionError) -> Bool in
            try await retryingStaleState { () async throws(SessionError) -> Bool in
                var record = try await loadSession(for: sender) ?? SessionRecord()
                let now = clock.now()
                guard record.recoveryMarks.allowsAction(at: now) else { return false }
                record.recoveryMarks.recordAction(at: now)
                var commit = StoreCommit()
                commit.store(record, for: sender)
                try await store.commit(commit)
                return true
            }
        }
        guard allowed else { return (.rateLimited, nil) }
        let distribution = try await senderKeyDistributionMessage(for: group)
        let outcomes = await distribute(distribution, for: group, to: [sender])
        guard let outcome = outcomes.first else { return (.ignored, nil) }
        return (.distributionResent(outcome), distribution.iteration)
    }
}
