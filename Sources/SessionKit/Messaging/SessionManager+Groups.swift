import SignalPrimitives

/// Groups (SPEC §5, sender keys): our sending chain and its distribution, the chains received
/// from members, group messages, and the group's members.
extension SessionManager {
    /// Our sender-key distribution message for `group`, creating our sending chain (and
    /// storing it) when there is none. Send it to each member device over its pairwise
    /// session with `distributeSenderKey(for:to:)`, which does both and pads it with the
    /// distribution content type (SPEC §2): its bytes encrypted with `encrypt(_:to:)` are
    /// application content, which `processSenderKeyDistribution(encrypted:for:from:)` refuses.
    /// - Throws: `SessionError.chainExhausted` when our chain is used up (rotate it),
    ///   `.storage` when the store fails, `.primitive` when libsodium is unusable.
    public func senderKeyDistributionMessage(for group: GroupID) async throws(SessionError) -> SenderKeyDistributionMessage {
        try await exclusive(.groupSending(group)) { () async throws(SessionError) -> SenderKeyDistributionMessage in
            try await retryingStaleState { () async throws(SessionError) -> SenderKeyDistributionMessage in
                if let chain = try await loadSendingChain(for: group) { return try chain.distributionMessage() }
                let chain = try SenderKeySendingChain(group: group, sender: localAddress, createdAt: clock.now(), using: random)
                let distribution = try chain.distributionMessage()
                var commit = StoreCommit()
                commit.store(chain, for: group)
                // Every member joins the new chain at its first iteration (SPEC §9).
                if let members = try? await loadGroupMembers(for: group), !members.isEmpty {
                    commit.store(members: members, joinPoints: Self.joinPoints(members, startingAt: chain), for: group)
                }
                try await store.commit(commit)
                return distribution
            }
        }
    }

    /// Replaces our sending chain for `group` with a new one and returns its distribution
    /// message (after a member left: send it to the remaining members only, with
    /// `distributeSenderKey(for:to:)`, which sends the current chain; `removeMembers` does all
    /// of it).
    /// - Throws: `SessionError.storage` when the store fails (the old chain stays),
    ///   `.primitive` when libsodium is unusable.
    public func rotateSenderKey(for group: GroupID) async throws(SessionError) -> SenderKeyDistributionMessage {
        try await exclusive(.groupSending(group)) { () async throws(SessionError) -> SenderKeyDistributionMessage in
            try await rotate(group, members: nil)
        }
    }

    /// Replaces our sending chain for `group` (holding the group's sending lock), and with
    /// `members` the group's members, in one commit.
    private func rotate(_ group: GroupID, members: Set<ProtocolAddress>?) async throws(SessionError) -> SenderKeyDistributionMessage {
        try await retryingStaleState { () async throws(SessionError) -> SenderKeyDistributionMessage in
            var chain = try SenderKeySendingChain(group: group, sender: localAddress, createdAt: clock.now(), using: random)
            // Replaces the stored chain: compare and swap against its generation.
            let replaced = try await loadSendingChain(for: group)
            chain.generation = replaced?.generation ?? 0
            let distribution = try chain.distributionMessage()
            var commit = StoreCommit()
            commit.store(chain, for: group)
            // Every member joins the new chain at its first iteration (SPEC §9); without members
            // given, the stored ones (when they do not load, no member has a join point).
            var stored: Set<ProtocolAddress>?
            if members == nil { stored = try? await loadGroupMembers(for: group) }
            if let members = members ?? stored {
                commit.store(members: members, joinPoints: Self.joinPoints(members, startingAt: chain), for: group)
            }
            // Nothing is sent on the old chain again, and a notice for it is ignored (SPEC §9):
            // its logged messages go.
            if let replaced { commit.sendLog = sendLogChanges(removing: .group(group, chainID: replaced.chainID.rawRepresentation)) }
            try await commitWithSendLog(commit)
            return distribution
        }
    }

    /// Replaces our sending chain for `group` when the `senderKeyPolicy` says it is due (it has
    /// sent `maximumMessages`, or is `maximumAge` old), and distributes the new chain to the
    /// group's members (`groupMembers(of:)`) through their pairwise sessions; returns the
    /// pairwise messages to send (as `distributeSenderKey(for:to:)` does), or nothing when the
    /// chain is not due (or there is none: `senderKeyDistributionMessage(for:)` creates it).
    /// Call it before `groupEncrypt(_:for:)`, which sends nothing on a chain that is due.
    /// - Throws: `SessionError.storage` when the store fails (the old chain stays),
    ///   `.primitive` when libsodium is unusable; per-device failures are in the outcomes.
    public func rotateSenderKeyIfDue(for group: GroupID) async throws(SessionError) -> [DeviceEncryption] {
        let distribution = try await exclusive(.groupSending(group)) { () async throws(SessionError) -> SenderKeyDistributionMessage? in
            guard let chain = try await loadSendingChain(for: group), senderKeyPolicy.isRotationDue(chain, now: clock.now()) else {
                return nil
            }
            return try await rotate(group, members: nil)
        }
        guard let distribution else { return [] }
        return await distribute(distribution, for: group, to: try await groupMembers(of: group))
    }

    /// Sends our distribution message for `group` to each of `members` through its pairwise
    /// session: the returned outcome per device (as `encrypt(_:toUser:)`) carries the pairwise
    /// message whose plaintext is the distribution message's bytes, padded with content type
    /// 0x02 (SPEC §2). The receiver passes it to
    /// `processSenderKeyDistribution(encrypted:for:from:)`; how the app marks such messages
    /// apart from others is the app's envelope, but a server that relabels one cannot make it
    /// pass: `decrypt(_:from:)` refuses a distribution and
    /// `processSenderKeyDistribution(encrypted:for:from:)` anything else, as `invalidPadding`.
    ///
    /// One outcome per device, in the order of `members` (a device named twice once). The
    /// sessions advanced are stored in one store commit (one transaction, however many
    /// members); a member that cannot be sent to in it (no session, an identity to accept, a
    /// commit the store refused) is then encrypted to alone and reports its own failure.
    /// - Throws: the errors of `senderKeyDistributionMessage(for:)`; per-device failures are
    ///   in the outcomes.
    public func distributeSenderKey(for group: GroupID, to members: [ProtocolAddress]) async throws(SessionError) -> [DeviceEncryption] {
        await distribute(try await senderKeyDistributionMessage(for: group), for: group, to: members)
    }

    /// `distributeSenderKey(for:to:)`, first starting a session from `bundle(for:)` with each
    /// member that has none (concurrently), so that one call reaches every member, new ones
    /// included. Per member: `bundle` returning `nil` is `noSession`, throwing is `storage`
    /// (with the error's description), and the errors of `processBundle(_:for:)` (a key change
    /// to accept is `untrustedIdentity`); those members get nothing, the others their message.
    /// - Throws: the errors of `senderKeyDistributionMessage(for:)`.
    public func distributeSenderKey(
        for group: GroupID, to members: [ProtocolAddress],
        fetchingBundles bundle: @escaping @Sendable (ProtocolAddress) async throws -> PreKeyBundle?
    ) async throws(SessionError) -> [DeviceEncryption] {
        let distribution = try await senderKeyDistributionMessage(for: group)
        let failures = await ensureSessions(with: members, fetchingBundle: bundle)
        let sent = await distribute(distribution, for: group, to: members.filter { failures[$0] == nil })
        var outcomes = Dictionary(sent.map { ($0.address, $0) }, uniquingKeysWith: { first, _ in first })
        for (address, error) in failures {
            outcomes[address] = DeviceEncryption(from: localAddress, to: address, group: group, result: .failure(error))
        }
        var seen = Set<ProtocolAddress>()
        return members.filter { seen.insert($0).inserted }.compactMap { outcomes[$0] }
    }

    /// Removes devices from `group` (SPEC §5): removes them from the group's members and starts
    /// a new sending chain in one store commit (from then on their distributions and group
    /// messages are `notAGroupMember`, until they are added again), forgets the chains received
    /// from them, and distributes the new chain to `remaining` through their pairwise sessions,
    /// so the removed devices cannot read anything sent next. Returns the pairwise messages for
    /// `remaining`, as `distributeSenderKey(for:to:)` does. A call that fails half-way (the
    /// chains of some removed devices not yet forgotten, or the distribution not encrypted) can
    /// be repeated: the repeat starts another chain, forgets what is left and distributes, and
    /// the removal is then complete (tested by interrupting each write).
    /// - Throws: `SessionError.storage` when the store fails, `.primitive` when libsodium is
    ///   unusable; per-device failures are in the outcomes.
    public func removeMembers(
        _ removed: [ProtocolAddress], from group: GroupID, remaining: [ProtocolAddress]
    ) async throws(SessionError) -> [DeviceEncryption] {
        let distribution = try await exclusive(.groupSending(group)) { () async throws(SessionError) -> SenderKeyDistributionMessage in
            let members = try await loadGroupMembers(for: group).subtracting(removed)
            return try await rotate(group, members: members)
        }
        for member in removed {
            try await exclusive(.groupReceiving(group, member)) { () async throws(SessionError) in
                try await store.removeReceiverState(for: group, sender: member)
            }
        }
        return await distribute(distribution, for: group, to: remaining.filter { !removed.contains($0) })
    }

    // MARK: Members

    /// The member devices of `group`, as set with `setGroupMembers(_:for:)` and
    /// `addGroupMembers(_:to:)`, by user id bytes and device id.
    /// - Throws: `SessionError.storage` when the store fails.
    public func groupMembers(of group: GroupID) async throws(SessionError) -> [ProtocolAddress] {
        try await loadGroupMembers(for: group).sorted {
            $0.userIDBytes == $1.userIDBytes ? $0.deviceID < $1.deviceID : $0.userIDBytes.lexicographicallyPrecedes($1.userIDBytes)
        }
    }

    /// Sets the member devices of `group` (from your server's roster: every device of every
    /// member user, the local user's other devices included; this device is left out). Only
    /// members' distributions and group messages are accepted: anything from another device is
    /// `SessionError.notAGroupMember`. Setting the members does not rotate our chain: to stop a
    /// device from reading what is sent next, use `removeMembers(_:from:remaining:)`.
    /// - Throws: `SessionError.storage` when the store fails; nothing changed then.
    public func setGroupMembers(_ members: [ProtocolAddress], for group: GroupID) async throws(SessionError) {
        // A stored list that does not load is replaced (its members then join at the next iteration).
        try await changeMembers(of: group, replacingDamaged: true) { _ in Set(members) }
    }

    /// Adds member devices to `group` (a member joined, or linked a device); send them our
    /// chain with `distributeSenderKey(for:to:)`.
    /// - Throws: `SessionError.storage` when the store fails; nothing changed then.
    public func addGroupMembers(_ members: [ProtocolAddress], to group: GroupID) async throws(SessionError) {
        try await changeMembers(of: group) { $0.union(members) }
    }

    /// Replaces the members of `group` with `change(current)` (this device left out), under the
    /// group's sending lock, with their join points in our sending chain (SPEC §9): a device
    /// that stays a member keeps its point, a device that was not a member joins at the chain's
    /// next iteration. `replacingDamaged`: stored members that do not load count as none (and
    /// so do their join points), otherwise their error is thrown.
    private func changeMembers(
        of group: GroupID, replacingDamaged: Bool = false, _ change: @Sendable (Set<ProtocolAddress>) -> Set<ProtocolAddress>
    ) async throws(SessionError) {
        try await exclusive(.groupSending(group)) { () async throws(SessionError) in
            let current = replacingDamaged ? ((try? await loadGroupMembers(for: group)) ?? []) : try await loadGroupMembers(for: group)
            let members = change(current).subtracting([localAddress])
            var points: [ProtocolAddress: GroupJoinPoint] = [:]
            // A chain that does not load has no join points to keep (it cannot be sent on either).
            if let chain = try? await loadSendingChain(for: group) {
                let stored = (try? await loadGroupJoinPoints(for: group)) ?? [:]
                let next = GroupJoinPoint(chainID: chain.chainID.rawRepresentation, iteration: chain.iteration)
                for member in members {
                    if current.contains(member), let point = stored[member], point.chainID == next.chainID {
                        points[member] = point
                    } else {
                        points[member] = next
                    }
                }
            }
            var commit = StoreCommit()
            commit.store(members: members, joinPoints: points, for: group)
            try await store.commit(commit)
        }
    }

    /// Every member's join point in a chain that starts now: its next iteration.
    private static func joinPoints(
        _ members: Set<ProtocolAddress>, startingAt chain: SenderKeySendingChain
    ) -> [ProtocolAddress: GroupJoinPoint] {
        let point = GroupJoinPoint(chainID: chain.chainID.rawRepresentation, iteration: chain.iteration)
        return Dictionary(uniqueKeysWithValues: members.map { ($0, point) })
    }

    /// Throws `notAGroupMember` unless `sender` is a member device of `group`.
    private func requireMember(_ sender: ProtocolAddress, of group: GroupID) async throws(SessionError) {
        guard try await loadGroupMembers(for: group).contains(sender) else { throw .notAGroupMember }
    }

    /// Encrypts a distribution message to each member (once per device) through its pairwise
    /// session, all in one store commit where they can be (`encryptTogether`), wiping the
    /// encoded distribution (it holds the chain key) when done.
    func distribute(
        _ distribution: SenderKeyDistributionMessage, for group: GroupID, to members: [ProtocolAddress]
    ) async -> [DeviceEncryption] {
        var bytes = distribution.serialized
        defer { SecureMemory.zero(&bytes) }
        return await encryptTogether(bytes, to: members, contentType: .senderKeyDistribution, group: group)
    }

    /// Stores the chain of a distribution message received from `sender` for `group` (SPEC §5:
    /// its group must be `group`, its signing key a valid point; a chain already held is
    /// ignored; beyond five chains per sender the oldest is dropped).
    /// - Throws: `SessionError.unsupportedVersion`, `.invalidMessage` (also for a distribution
    ///   of another group), `.invalidKey`, `.storage` when the store fails; nothing changed then.
    public func processSenderKeyDistribution(_ bytes: [UInt8], for group: GroupID, from sender: ProtocolAddress) async throws(SessionError) {
        try await requireMember(sender, of: group)
        try await process(try SenderKeyDistributionMessage(serialized: bytes), for: group, from: sender)
    }

    /// Stores a distribution's chain under the (group, sender) lock; `nested` when called inside
    /// the peer lock of `processSenderKeyDistribution(encrypted:for:from:)` (locks are always
    /// taken peer first, then group, never the other way round).
    func process(
        _ distribution: SenderKeyDistributionMessage, for group: GroupID, from sender: ProtocolAddress, nested: Bool = false
    ) async throws(SessionError) {
        try await exclusive(.groupReceiving(group, sender), nested: nested) { () async throws(SessionError) in
            try await retryingStaleState { () async throws(SessionError) in
                var commit = StoreCommit()
                commit.store(try await receiverState(processing: distribution, for: group, from: sender), for: group, sender: sender)
                try await store.commit(commit)
            }
        }
    }

    /// The stored chains from `sender` in `group` with `distribution`'s chain added.
    func receiverState(
        processing distribution: SenderKeyDistributionMessage, for group: GroupID, from sender: ProtocolAddress
    ) async throws(SessionError) -> SenderKeyReceiverState {
        var state = try await loadReceiverState(for: group, sender: sender) ?? SenderKeyReceiverState()
        try state.process(distribution, for: group)
        return state
    }

    /// Decrypts a pairwise message from `sender` whose plaintext is a distribution message
    /// (as `distributeSenderKey` sends: padded with content type 0x02, SPEC §2; any other
    /// pairwise message is `invalidPadding`), stores its chain for `group`, and then persists
    /// the pairwise session. The decrypted plaintext (it holds the chain key) is wiped on every
    /// path, failures included. Returns what `decrypt` would report about the sender.
    /// - Throws: the errors of `decrypt(_:from:)` and of `processSenderKeyDistribution`; when
    ///   either fails, the pairwise session is not persisted and the same bytes can be retried
    ///   (storing a chain already held changes nothing).
    @discardableResult
    public func processSenderKeyDistribution(
        encrypted bytes: [UInt8], for group: GroupID, from sender: ProtocolAddress
    ) async throws(SessionError) -> IdentityObservation {
        let message = try IncomingMessage(serialized: bytes)
        // Checked before decrypting: a non-member's pairwise message advances nothing.
        try await requireMember(sender, of: group)
        return try await decryptAndCommit(message, from: sender, wipingPlaintext: true, contentType: .senderKeyDistribution) {
            (decryption: SessionRecord.Decryption, identity: IdentityOutcome, commit: inout StoreCommit)
                async throws(SessionError) -> IdentityObservation in
            // A quarantined sender (not under the verified user's key) cannot give us chains that
            // its group messages would then be shown under.
            if identity.isQuarantined { throw .untrustedIdentity }
            // Parsing copies the chain key into wiping storage; the plaintext is wiped after this.
            let distribution = try SenderKeyDistributionMessage(serialized: decryption.plaintext)
            // The chain is committed with the pairwise session, in one transaction. The group lock
            // is taken inside the peer lock (never the other way round).
            let state = try await self.exclusive(.groupReceiving(group, sender), nested: true) {
                () async throws(SessionError) -> SenderKeyReceiverState in
                try await self.receiverState(processing: distribution, for: group, from: sender)
            }
            commit.store(state, for: group, sender: sender)
            return identity.observation
        }
    }

    /// Encrypts `plaintext` once for every member of `group` with our sending chain and
    /// stores the advanced chain before returning the message.
    ///
    /// A chain the `senderKeyPolicy` says is due (1,000 messages or 7 days by default) sends
    /// nothing more: call `rotateSenderKeyIfDue(for:)` before sending (it replaces the chain and
    /// distributes the new one when due, and does nothing otherwise), and send what it returns.
    /// - Throws: `SessionError.noSession` when we have no chain for `group` (create it with
    ///   `senderKeyDistributionMessage(for:)` and distribute it first), `.chainExhausted` after
    ///   2^32 messages or when the `senderKeyPolicy` says the chain is due (rotate the sender
    ///   key: `rotateSenderKeyIfDue(for:)`), `.damagedState(.senderKeySendingChain)`,
    ///   `.storage`; nothing changed then.
    public func groupEncrypt(_ plaintext: [UInt8], for group: GroupID) async throws(SessionError) -> [UInt8] {
        try await exclusive(.groupSending(group)) { () async throws(SessionError) -> [UInt8] in
            try await retryingStaleState { () async throws(SessionError) -> [UInt8] in
                guard let chain = try await loadSendingChain(for: group) else { throw .noSession }
                if senderKeyPolicy.isRotationDue(chain, now: clock.now()) { throw .chainExhausted }
                let (updated, message) = try await Self.compute { [chain] () throws(SessionError) in
                    var chain = chain
                    let message = try chain.encrypt(plaintext)
                    return (chain, message)
                }
                var commit = StoreCommit()
                commit.store(updated, for: group)
                commit.sendLog = sendLogChanges(logging: plaintext, on: .group(group, chainID: chain.chainID.rawRepresentation), at: chain.iteration)
                try await commitWithSendLog(commit)
                return message
            }
        }
    }

    /// Decrypts a group message from `sender` in `group` and stores the advanced chain before
    /// returning the plaintext (decrypt → persist → acknowledge; as with `decrypt(_:from:)`,
    /// use `groupDecrypt(_:for:from:beforePersisting:)` to store the plaintext before the chain).
    /// A message sent before this device was given the chain is `messageKeyUnavailable` (it
    /// can never be decrypted here: do not mistake it for a duplicate the app has seen).
    /// - Throws: `SessionError.unknownChain` when nothing was received from `sender` (after
    ///   the type and length checks of SPEC §5; keep the message and retry once the
    ///   distribution arrives), the receiver's errors of SPEC §5 (`invalidMessage`,
    ///   `invalidSignature`, `duplicateMessage`, `tooManySkippedMessages`,
    ///   `messageKeyUnavailable`…), `.damagedState(.senderKeyReceiverState)`, `.storage`;
    ///   nothing changed then.
    public func groupDecrypt(_ bytes: [UInt8], for group: GroupID, from sender: ProtocolAddress) async throws(SessionError) -> [UInt8] {
        try await groupDecrypt(bytes, for: group, from: sender, beforePersisting: { (_: [UInt8]) async throws(SessionError) in })
    }

    /// Decrypts a group message like `groupDecrypt(_:for:from:)`, handing the plaintext to
    /// `process` before the advanced chain is persisted (decrypt → process → persist →
    /// acknowledge, with the crash consistency of `decrypt(_:from:beforePersisting:)`).
    /// - Throws: the errors of `groupDecrypt(_:for:from:)`, and whatever `process` throws (the
    ///   chain is then not persisted and the same bytes can be retried).
    public func groupDecrypt(
        _ bytes: [UInt8], for group: GroupID, from sender: ProtocolAddress,
        beforePersisting process: @Sendable ([UInt8]) async throws(SessionError) -> Void
    ) async throws(SessionError) -> [UInt8] {
        try await requireMember(sender, of: group)
        return try await exclusive(.groupReceiving(group, sender)) { () async throws(SessionError) -> [UInt8] in
            try await retryingStaleState { () async throws(SessionError) -> [UInt8] in
                try await decryptGroupMessage(bytes, for: group, from: sender, releasing: nil, process)
            }
        }
    }

    /// Decrypts, processes and commits one group message (holding the (group, sender) lock).
    /// A message of a chain this device does not hold is kept as pending (unless the chain is
    /// held for another group or sender: relabelled or re-attributed, `invalidMessage`) and
    /// reported as `unknownChain`. `releasing`: the pending message's id, deleted in the same
    /// commit.
    private func decryptGroupMessage(
        _ bytes: [UInt8], for group: GroupID, from sender: ProtocolAddress, releasing pendingID: UInt64?,
        _ process: @Sendable ([UInt8]) async throws(SessionError) -> Void
    ) async throws(SessionError) -> [UInt8] {
        let message = try SenderKeyMessage(serialized: bytes)
        let state = try await loadReceiverState(for: group, sender: sender)
        guard let state, state.holdsChain(message.chainID) else {
            if try await store.holdsReceiverChain(message.chainID.rawRepresentation) { throw .invalidMessage }
            if pendingID == nil { try await keepPending(bytes, for: group, from: sender) }
            throw .unknownChain
        }
        let computed: (SenderKeyReceiverState, [UInt8])
        do throws(SessionError) {
            computed = try await Self.compute { [state] () throws(SessionError) in
                var state = state
                let plaintext = try state.decrypt(bytes, for: group, from: sender)
                return (state, plaintext)
            }
        } catch {
            // As for pairwise messages: judge the message on the fresh chains.
            let stored = try await loadReceiverState(for: group, sender: sender)
            if stored?.generation != state.generation { throw .staleState }
            throw error
        }
        let (updated, plaintext) = computed
        try await process(plaintext)
        var commit = StoreCommit()
        commit.store(updated, for: group, sender: sender)
        if let pendingID { commit.releasedPendingGroupMessages = [pendingID] }
        try await store.commit(commit)
        return plaintext
    }

    // MARK: Pending group messages

    /// How long a group message whose distribution has not arrived is kept (7 days): after
    /// that it is dropped.
    public static let pendingGroupMessageLifetime: Int64 = 7 * 24 * 3600

    /// Keeps a group message until its distribution arrives (dropping expired ones).
    private func keepPending(_ bytes: [UInt8], for group: GroupID, from sender: ProtocolAddress) async throws(SessionError) {
        let now = clock.now()
        var commit = StoreCommit()
        commit.pendingGroupMessage = PendingGroupMessage(
            id: 0, group: group, sender: sender, message: bytes, expiresAt: now.adding(seconds: Self.pendingGroupMessageLifetime))
        commit.expiringPendingGroupMessages = now
        try await store.commit(commit)
    }

    /// Decrypts the group messages from `sender` in `group` that were kept because their
    /// chain's distribution had not arrived (`unknownChain`), now that one may have: each that
    /// decrypts is handed to `process` and then deleted with the advanced chain, in one commit
    /// (as `groupDecrypt(_:for:from:beforePersisting:)`); those still without their chain stay
    /// until they expire; those that fail otherwise (a duplicate, a forgery) are deleted.
    /// `receive(_:)` calls this after every distribution, and reports a kept message that turns
    /// out older than the distribution (`messageKeyUnavailable`) as it reports the same message
    /// arriving after it (`ReceivedMessage.senderKeyDistribution`'s `undecryptableMessages`);
    /// call it after `processSenderKeyDistribution` when you do not use envelopes. Returns the
    /// decrypted messages, oldest first.
    /// - Throws: `SessionError.notAGroupMember` when `sender` is not a member of `group` (any
    ///   more: its kept messages are never released and expire), `.storage` when the store
    ///   fails, and whatever `process` throws (the message it was given stays pending); the
    ///   messages handed out before stay handed out.
    public func releasePendingGroupMessages(
        for group: GroupID, from sender: ProtocolAddress,
        beforePersisting process: @Sendable (DecryptedGroupMessage) async throws(SessionError) -> Void = { _ in }
    ) async throws(SessionError) -> [DecryptedGroupMessage] {
        try await releasePending(for: group, from: sender, beforePersisting: process).released
    }

    /// What `releasePending` did with the kept messages.
    struct PendingRelease {
        /// The messages that decrypted, oldest first.
        var released: [DecryptedGroupMessage] = []
        /// The messages that can never decrypt here although they may be genuine (older than
        /// the distribution, or too far ahead), with their error: reported, not dropped silently.
        var unreadable: [(message: [UInt8], error: SessionError)] = []
    }

    /// `releasePendingGroupMessages`, with the messages that were deleted as unreadable.
    func releasePending(
        for group: GroupID, from sender: ProtocolAddress,
        beforePersisting process: @Sendable (DecryptedGroupMessage) async throws(SessionError) -> Void
    ) async throws(SessionError) -> PendingRelease {
        // A device removed since its messages were kept gets nothing out (they expire).
        try await requireMember(sender, of: group)
        return try await exclusive(.groupReceiving(group, sender)) { () async throws(SessionError) -> PendingRelease in
            let kept = try await store.loadPendingGroupMessages(for: group, sender: sender)
            // Nothing kept (the usual case): no write (expired messages go when the next is kept).
            guard !kept.isEmpty else { return PendingRelease() }
            var result = PendingRelease()
            var dropped: [UInt64] = []
            for pending in kept {
                do throws(SessionError) {
                    let plaintext = try await retryingStaleState { () async throws(SessionError) -> [UInt8] in
                        try await decryptGroupMessage(pending.message, for: group, from: sender, releasing: pending.id) {
                            (plaintext: [UInt8]) async throws(SessionError) in
                            try await process(DecryptedGroupMessage(group: group, sender: sender, plaintext: plaintext))
                        }
                    }
                    result.released.append(DecryptedGroupMessage(group: group, sender: sender, plaintext: plaintext))
                } catch where error == .unknownChain {
                    continue
                } catch where error.disposition == .drop || error.disposition == .dropSilently || error.disposition == .neverDecryptable {
                    dropped.append(pending.id)
                    if error == .messageKeyUnavailable || error == .tooManySkippedMessages {
                        result.unreadable.append((pending.message, error))
                    }
                }
            }
            var commit = StoreCommit()
            commit.releasedPendingGroupMessages = dropped
            commit.expiringPendingGroupMessages = clock.now()
            try await store.commit(commit)
            return result
        }
    }
}
