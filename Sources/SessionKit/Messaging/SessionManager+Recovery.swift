import SignalPrimitives

/// Recovery, the receiving side (SPEC §9): a message this device cannot decrypt because its
/// state for the sender is lost or unusable is answered with a retry notice, and the advice to
/// start a new session is rate-limited.
///
/// Which failures get a notice: for a pairwise message (or a distribution) `noSession`,
/// `unknownPreKey`, `tooManySkippedMessages`, and `invalidMessage` on a ratchet key that none
/// of the sessions with the sender knows; for a group message `messageKeyUnavailable`,
/// `tooManySkippedMessages`, and `unknownChain` once a message of that chain has waited
/// `distributionWait`. Never for `duplicateMessage`, `invalidSignature`, a message whose header
/// does not parse, or anything else.
///
/// Limits, kept in the sender's `SessionRecord` (`RecoveryMarks`, persisted and compared and
/// swapped with the record, so they hold across restarts and processes): at most one notice
/// per (sender, ratchet key) or (sender, group, chain id) — the last eight are remembered —
/// and at most one per hour to each device; the advice to start a new session (`noSession`,
/// `unknownPreKey`) at most once per hour per device. For a device this one has neither a
/// session record nor a trust record for (a made-up sender), the marks are kept in memory
/// only, for the most recent 1,024 such senders: forged messages leave nothing in the store.
extension SessionManager {
    /// How long a group message whose chain has not arrived (`unknownChain`) waits before its
    /// sender is asked for the chain with a retry notice: two minutes. A distribution usually
    /// arrives within seconds of the first message on its chain (it travels separately, so
    /// it may come second); the notice covers one that never comes.
    public static let distributionWait: Int64 = 120

    /// SPEC §9's answer to a pairwise message (the bytes of a ratchet or prekey message, also
    /// one that carried a distribution) from `sender` that failed with `error`, or `nil` when
    /// the failure gets none (the caller throws `error`). Records what it hands out.
    /// - Throws: `SessionError.storage` or `.damagedState` when the sender's record cannot be
    ///   read or written.
    func undecryptable(_ bytes: [UInt8], from sender: ProtocolAddress, failedWith error: SessionError) async throws(SessionError) -> UndecryptableMessage? {
        // A message whose header does not parse gets nothing.
        guard let message = try? IncomingMessage(serialized: bytes) else { return nil }
        let ratchetMessage: RatchetMessage
        var prefixIdentity: Ed25519.PublicKey?
        switch message {
        case let .ratchet(inner): ratchetMessage = inner
        case let .preKey(preKeyMessage):
            ratchetMessage = preKeyMessage.message
            prefixIdentity = preKeyMessage.prefix.identityKey
        }
        switch error {
        case .noSession, .unknownPreKey, .tooManySkippedMessages, .invalidMessage: break
        default: return nil
        }
        return try await recordFailure(
            .pairwise(ratchetKey: ratchetMessage.ratchetKey.rawRepresentation, counter: ratchetMessage.counter), from: sender,
            error: error, identityHint: prefixIdentity,
            unknownRatchetKey: error == .invalidMessage ? ratchetMessage.ratchetKey : nil)
    }

    /// SPEC §9's answer to a group message from `sender` in `group` that failed with `error`,
    /// or `nil` when the failure gets none (the caller throws `error`). An `unknownChain` gets
    /// one only once a kept message of that chain has waited `distributionWait`.
    /// - Throws: `SessionError.storage` or `.damagedState` when the sender's record or the kept
    ///   messages cannot be read, or the record written.
    func undecryptableGroupMessage(
        _ bytes: [UInt8], for group: GroupID, from sender: ProtocolAddress, failedWith error: SessionError
    ) async throws(SessionError) -> UndecryptableMessage? {
        guard let message = try? SenderKeyMessage(serialized: bytes) else { return nil }
        var iteration = message.iteration
        switch error {
        case .messageKeyUnavailable, .tooManySkippedMessages: break
        case .unknownChain:
            guard let overdue = try await overduePendingIteration(of: message.chainID.rawRepresentation, in: group, from: sender) else {
                return nil
            }
            iteration = overdue
        default: return nil
        }
        return try await recordFailure(
            .group(group, chainID: message.chainID.rawRepresentation, iteration: iteration), from: sender, error: error,
            identityHint: nil, unknownRatchetKey: nil)
    }

    /// Retry notices for the group messages from `sender` in `group` that this device keeps
    /// because their chain has not arrived (`unknownChain`) and that have waited at least
    /// `distributionWait`: one per chain that is due (the limits of `UndecryptableMessage`
    /// apply), to send to `sender`. `receive(_:)` asks for one whenever another message of such
    /// a chain arrives; call this too (for example when the app becomes active) for a member
    /// that sent one message and nothing since.
    /// - Throws: `SessionError.storage` or `.damagedState` when the store fails.
    public func retryNoticesForPendingGroupMessages(in group: GroupID, from sender: ProtocolAddress) async throws(SessionError) -> [MessageEnvelope] {
        let kept = try await pendingGroupMessages(in: group, from: sender)
        var seen = Set<[UInt8]>()
        var notices: [MessageEnvelope] = []
        for pending in kept {
            guard let message = try? SenderKeyMessage(serialized: pending.message),
                  seen.insert(message.chainID.rawRepresentation).inserted,
                  let outcome = try await undecryptableGroupMessage(pending.message, for: group, from: sender, failedWith: .unknownChain),
                  let notice = outcome.retryNotice else { continue }
            notices.append(notice)
        }
        return notices
    }

    // MARK: Helpers

    /// The group messages from `sender` in `group` kept for their chain.
    private func pendingGroupMessages(in group: GroupID, from sender: ProtocolAddress) async throws(SessionError) -> [PendingGroupMessage] {
        do { return try await store.loadPendingGroupMessages(for: group, sender: sender) } catch {
            throw Self.stored(error, .groupMembers, peer: sender)
        }
    }

    /// The iteration of the oldest message of chain `chainID` from `sender` in `group` that has
    /// been kept for `distributionWait` or longer, or `nil` when none has.
    private func overduePendingIteration(of chainID: [UInt8], in group: GroupID, from sender: ProtocolAddress) async throws(SessionError) -> UInt32? {
        let due = clock.now().adding(seconds: -Self.distributionWait)
        for pending in try await pendingGroupMessages(in: group, from: sender) {
            let arrived = pending.expiresAt.adding(seconds: -Self.pendingGroupMessageLifetime)
            guard arrived <= due, let message = try? SenderKeyMessage(serialized: pending.message),
                  message.chainID.rawRepresentation == chainID else { continue }
            return message.iteration
        }
        return nil
    }

    /// Under the sender's lock: decides what is due for `failure` (a notice, the advice to
    /// start a new session), notes it in the sender's record and commits the record. With
    /// `unknownRatchetKey`, returns `nil` when a session with the sender knows that key (an
    /// `invalidMessage` there is not lost state).
    private func recordFailure(
        _ failure: RetryNotice.Failure, from sender: ProtocolAddress, error: SessionError, identityHint: Ed25519.PublicKey?,
        unknownRatchetKey: X25519.PublicKey?
    ) async throws(SessionError) -> UndecryptableMessage? {
        let identity = try await localIdentity()
        let registrationID = try await localRegistrationID()
        let group: GroupID? = if case let .group(group, _, _) = failure { group } else { nil }
        let advises = error == .noSession || error == .unknownPreKey
        // Signed group messages are authenticated before these errors (SPEC §5); nothing else is.
        let isAuthenticated = group != nil && (error == .messageKeyUnavailable || error == .tooManySkippedMessages)
        return try await exclusive(.peer(sender)) { () async throws(SessionError) -> UndecryptableMessage? in
            try await retryingStaleState { () async throws(SessionError) -> UndecryptableMessage? in
                let stored = try await loadSession(for: sender)
                // A sender with neither a stored record nor a trust record (a made-up address, as
                // forged messages use) keeps its marks in memory: it writes nothing. A known
                // contact whose session was lost keeps them in its record, across restarts.
                var inMemory = false
                if stored == nil, !sender.isSameUser(as: localAddress) {
                    let trusted = (try? await trust.trustedIdentityKey(forUser: sender.userID)) ?? nil
                    inMemory = trusted == nil
                }
                var record = stored ?? SessionRecord()
                if inMemory { record.recoveryMarks = sessionlessMarks[sender] }
                if let key = unknownRatchetKey, record.knowsRatchetKey(key) { return nil }
                let now = clock.now()
                var changed = false
                var notice: MessageEnvelope?
                if record.recoveryMarks.allowsNotice(for: failure.identifyingBytes, at: now),
                   let recipientKey = try await identityKey(of: sender, in: record, hint: identityHint),
                   let created = try? RetryNotice(
                       from: identity, at: localAddress, to: sender, recipientIdentityKey: recipientKey, registrationID: registrationID,
                       failure: failure) {
                    notice = try Self.envelope(from: localAddress, to: sender, kind: .retryNotice, group: nil, body: created.serialized)
                    record.recoveryMarks.recordNotice(for: failure.identifyingBytes, at: now)
                    changed = true
                }
                var startsNewSession = false
                if advises, record.recoveryMarks.allowsNewSessionAdvice(at: now) {
                    record.recoveryMarks.recordNewSessionAdvice(at: now)
                    startsNewSession = true
                    changed = true
                }
                if changed, inMemory {
                    sessionlessMarks.keep(record.recoveryMarks, for: sender)
                } else if changed {
                    var commit = StoreCommit()
                    commit.store(record, for: sender)
                    try await store.commit(commit)
                }
                return UndecryptableMessage(
                    sender: sender, group: group, error: error, retryNotice: notice, startsNewSession: startsNewSession,
                    isAuthenticated: isAuthenticated)
            }
        }
    }

    /// The identity key to address a notice to `address` with (SPEC §9: from the trust record
    /// or a session, else from what the failed message claimed): the local identity key for
    /// the local user's devices, else the trust evaluator's key for the user, else the key of
    /// the record's current or most recent session, else `hint`. `nil` when none is known.
    private func identityKey(of address: ProtocolAddress, in record: SessionRecord, hint: Ed25519.PublicKey?) async throws(SessionError) -> Ed25519.PublicKey? {
        if address.isSameUser(as: localAddress) { return try await localIdentity().publicKey }
        if let trusted = try? await trust.trustedIdentityKey(forUser: address.userID) { return trusted }
        return record.currentSession?.remoteIdentityKey ?? record.previousSessions.first?.remoteIdentityKey ?? hint
    }
}

extension SessionRecord {
    /// Whether a session of the record (current or previous) knows `ratchetKey` (SPEC §3: its
    /// DHr, or the key of a stored skipped message).
    func knowsRatchetKey(_ ratchetKey: X25519.PublicKey) -> Bool {
        let sessions = (currentSession.map { [$0] } ?? []) + previousSessions
        return sessions.contains { $0.ratchet.remoteRatchetKey == ratchetKey || $0.ratchet.skippedKeys.holdsKeys(for: ratchetKey) }
    }
}
