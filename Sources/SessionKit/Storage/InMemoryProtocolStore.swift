import SignalPrimitives

/// A `ProtocolStore` held in memory: the reference implementation, for tests and for apps
/// that persist by other means (each stored state has `serialized()` and `init(serialized:)`).
///
/// The EK_A replay records (`BaseKeyRecord`) are kept in a set per signed prekey, apart from
/// the prekeys: a prekey message looks its record up and adds it in constant time, and the
/// records of a signed prekey go with it when an update removes it.
///
/// Every method runs on the actor, so each call, including `updatePreKeys` and `commit`, is
/// atomic. Records are kept as values: storing one copies no key material and serializes
/// nothing. It follows the generation contract of `ProtocolStore.commit(_:)` like any
/// persistent store: a stale copy is refused with `SessionError.staleState`.
public actor InMemoryProtocolStore: ProtocolStore {
    private struct SenderKeyName: Hashable {
        let group: GroupID
        let sender: ProtocolAddress
    }

    private let identity: IdentityKeyPair
    private let registrationID: RegistrationID
    private var localPreKeys: LocalPreKeys?
    /// The EK_A replay records, by signed prekey id.
    private var baseKeyRecords: [UInt32: Set<X25519.PublicKey>] = [:]
    private var sessions: [ProtocolAddress: SessionRecord] = [:]
    private var sendingChains: [GroupID: SenderKeySendingChain] = [:]
    private var receiverStates: [SenderKeyName: SenderKeyReceiverState] = [:]
    /// The last generation of each deleted record and removed receiver state: a new one starts
    /// above it, so that a copy from before the deletion never matches again.
    private var retiredSessionGenerations: [ProtocolAddress: UInt64] = [:]
    private var retiredReceiverGenerations: [SenderKeyName: UInt64] = [:]
    private var groupMembers: [GroupID: Set<ProtocolAddress>] = [:]
    private var groupJoinPoints: [GroupID: [ProtocolAddress: GroupJoinPoint]] = [:]
    private var pendingGroupMessages: [SenderKeyName: [PendingGroupMessage]] = [:]
    private var nextPendingGroupMessageID: UInt64 = 1
    /// The send log, oldest first.
    private var sendLog: [SendLogEntry] = []
    private var nextSendLogID: UInt64 = 1

    /// A store for the device with `identity`, holding `preKeys` (none yet when `nil`), for the
    /// installation `registrationID` (a new random one when `nil`: a store created for a
    /// restored identity draws its own, SPEC §9).
    public init(identity: IdentityKeyPair, preKeys: LocalPreKeys? = nil, registrationID: RegistrationID? = nil) {
        self.identity = identity
        self.registrationID = registrationID ?? .random()
        localPreKeys = preKeys
    }

    // MARK: IdentityKeyStore

    /// The identity given at creation.
    public func localIdentity() -> IdentityKeyPair { identity }

    /// The registration id given or drawn at creation.
    public func localRegistrationID() -> RegistrationID { registrationID }

    // MARK: SessionStore

    /// The record for `address`, or `nil`.
    public func loadSession(for address: ProtocolAddress) -> SessionRecord? { sessions[address] }

    /// The records for `addresses`, in their order, in one call.
    public func loadSessions(for addresses: [ProtocolAddress]) -> [SessionRecord?] { addresses.map { sessions[$0] } }

    /// Deletes the record for `address`.
    public func deleteSession(for address: ProtocolAddress) {
        if let record = sessions.removeValue(forKey: address) { retiredSessionGenerations[address] = record.generation }
    }

    /// The device ids of `userID` with a record, ascending.
    public func deviceIDs(ofUser userID: String) -> [UInt32] {
        let user = Array(userID.utf8)
        return sessions.keys.filter { $0.userIDBytes.elementsEqual(user) }.map(\.deviceID).sorted()
    }

    /// Every address with a record (for tests and inspection).
    func addresses() -> [ProtocolAddress] { Array(sessions.keys) }

    // MARK: PreKeyStore

    /// The prekeys, or `nil`.
    public func loadPreKeys() -> LocalPreKeys? { localPreKeys }

    /// Runs `update` on the prekeys and keeps the result only when it returns, with the replay
    /// records of the signed prekeys it removed or replaced deleted.
    /// - Throws: the error of `update`; nothing changed then.
    public func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) throws(SessionError) -> Result {
        var candidate = localPreKeys
        let result = try update(&candidate)
        if let previous = localPreKeys {
            for id in previous.signedPreKeyIDsRemoved(in: candidate) { baseKeyRecords[id] = nil }
        } else {
            baseKeyRecords = [:]
        }
        localPreKeys = candidate
        return result
    }

    /// Whether the replay record of `baseKey` under the signed prekey `signedPreKeyID` is held.
    public func hasRecordedBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) -> Bool {
        baseKeyRecords[signedPreKeyID]?.contains(baseKey) ?? false
    }

    /// Adds `records` as prekey messages would (each counted under its signed prekey, within
    /// the cap), in one step: for tests and benchmarks that need many records.
    /// - Throws: `SessionError.unknownPreKey` when a signed prekey is not held or its record
    ///   is full, `.staleState` when a record is held already (or repeated); nothing changed then.
    @_spi(Testing) public func addBaseKeyRecords(_ records: [BaseKeyRecord]) throws(SessionError) {
        guard var keys = localPreKeys else { throw .unknownPreKey }
        var added = baseKeyRecords
        for record in records {
            guard added[record.signedPreKeyID, default: []].insert(record.baseKey).inserted else { throw .staleState }
            try keys.count(record)
        }
        localPreKeys = keys
        baseKeyRecords = added
    }

    // MARK: ProtocolStore

    /// Applies every write of `commit`, or none (see `ProtocolStore.commit(_:)`). The identity
    /// write is ignored: this store keeps no trust records (`appliesIdentityRecords` is false).
    /// - Throws: `SessionError.staleState` when a generation does not match or the replay
    ///   record is held already, `.unknownPreKey` when a one-time prekey the commit uses up is
    ///   not held or the signed prekey's record is full; nothing changed then.
    public func commit(_ commit: StoreCommit) throws(SessionError) {
        // By index: a `for write in` loop would copy each record. Each device is looked up
        // once: where its record is (kept for the writes below), or that it has none.
        var slots: [Dictionary<ProtocolAddress, SessionRecord>.Index?] = []
        slots.reserveCapacity(commit.sessions.count)
        for index in commit.sessions.indices {
            let slot = sessions.index(forKey: commit.sessions[index].address)
            guard commit.sessions[index].record.generation == (slot.map { sessions.values[$0].generation } ?? 0) else {
                throw .staleState
            }
            slots.append(slot)
        }
        if let write = commit.sendingChain {
            guard write.chain.generation == (sendingChains[write.group]?.generation ?? 0) else { throw .staleState }
        }
        let receiverName = commit.receiverState.map { SenderKeyName(group: $0.group, sender: $0.sender) }
        if let write = commit.receiverState, let receiverName {
            guard write.state.generation == (receiverStates[receiverName]?.generation ?? 0) else { throw .staleState }
        }
        var preKeys = localPreKeys
        if let record = commit.baseKeyRecord {
            guard !hasRecordedBaseKey(record.baseKey, signedPreKeyID: record.signedPreKeyID) else { throw .staleState }
            guard var keys = preKeys else { throw .unknownPreKey }
            try commit.applyPreKeyChanges(to: &keys)
            preKeys = keys
        }
        // Every check passed: apply everything.
        localPreKeys = preKeys
        if let record = commit.baseKeyRecord { baseKeyRecords[record.signedPreKeyID, default: []].insert(record.baseKey) }
        // Replacements first, through the slots found above (a replaced value leaves the
        // dictionary's indices valid), then the new devices (whose insertion may move them).
        for (index, slot) in zip(commit.sessions.indices, slots) {
            guard let slot else { continue }
            var record = commit.sessions[index].record
            record.generation += 1
            sessions.values[slot] = record
        }
        for (index, slot) in zip(commit.sessions.indices, slots) where slot == nil {
            let address = commit.sessions[index].address
            var record = commit.sessions[index].record
            record.generation = (retiredSessionGenerations[address] ?? 0) + 1
            sessions[address] = record
        }
        if let write = commit.sendingChain {
            var chain = write.chain
            chain.generation += 1
            sendingChains[write.group] = chain
        }
        if let write = commit.receiverState, let receiverName {
            var state = write.state
            state.generation = receiverStates[receiverName] == nil
                ? (retiredReceiverGenerations[receiverName] ?? 0) + 1 : state.generation + 1
            receiverStates[receiverName] = state
        }
        applyGroupWrites(of: commit)
        if let changes = commit.sendLog { applySendLog(changes) }
    }

    /// The group members and pending messages of `commit` (after its checks passed).
    private func applyGroupWrites(of commit: StoreCommit) {
        if let write = commit.groupMembers {
            groupMembers[write.group] = write.members.isEmpty ? nil : write.members
            groupJoinPoints[write.group] = write.joinPoints.isEmpty ? nil : write.joinPoints
        }
        if let expiry = commit.expiringPendingGroupMessages {
            for (name, messages) in pendingGroupMessages {
                let kept = messages.filter { $0.expiresAt > expiry }
                pendingGroupMessages[name] = kept.isEmpty ? nil : kept
            }
        }
        if !commit.releasedPendingGroupMessages.isEmpty {
            let released = Set(commit.releasedPendingGroupMessages)
            for (name, messages) in pendingGroupMessages {
                let kept = messages.filter { !released.contains($0.id) }
                pendingGroupMessages[name] = kept.isEmpty ? nil : kept
            }
        }
        if let pending = commit.pendingGroupMessage {
            let name = SenderKeyName(group: pending.group, sender: pending.sender)
            var messages = pendingGroupMessages[name] ?? []
            messages.append(PendingGroupMessage(
                id: nextPendingGroupMessageID, group: pending.group, sender: pending.sender, message: pending.message,
                expiresAt: pending.expiresAt))
            nextPendingGroupMessageID += 1
            if messages.count > PendingGroupMessage.maximumPerSender {
                messages.removeFirst(messages.count - PendingGroupMessage.maximumPerSender)
            }
            pendingGroupMessages[name] = messages
        }
    }

    // MARK: GroupStore

    /// The member devices of `group` (empty when none were set).
    public func loadGroupMembers(for group: GroupID) -> Set<ProtocolAddress> { groupMembers[group] ?? [] }

    /// The join points of `group`'s members in our sending chain (none when none were set).
    public func loadGroupJoinPoints(for group: GroupID) -> [ProtocolAddress: GroupJoinPoint] { groupJoinPoints[group] ?? [:] }

    /// The messages from `sender` in `group` waiting for a distribution, oldest first.
    public func loadPendingGroupMessages(for group: GroupID, sender: ProtocolAddress) -> [PendingGroupMessage] {
        pendingGroupMessages[SenderKeyName(group: group, sender: sender)] ?? []
    }

    /// Whether any stored receiver state holds a chain with the id `chainID`.
    public func holdsReceiverChain(_ chainID: [UInt8]) -> Bool {
        receiverStates.values.contains { $0.chainIDs.contains { $0.rawRepresentation == chainID } }
    }

    // MARK: SenderKeyStore

    /// Our sending chain for `group`, or `nil`.
    public func loadSendingChain(for group: GroupID) -> SenderKeySendingChain? { sendingChains[group] }

    /// The chains received from `sender` in `group`, or `nil`.
    public func loadReceiverState(for group: GroupID, sender: ProtocolAddress) -> SenderKeyReceiverState? {
        receiverStates[SenderKeyName(group: group, sender: sender)]
    }

    /// Forgets the chains received from `sender` in `group`.
    public func removeReceiverState(for group: GroupID, sender: ProtocolAddress) {
        let name = SenderKeyName(group: group, sender: sender)
        if let state = receiverStates.removeValue(forKey: name) { retiredReceiverGenerations[name] = state.generation }
    }
}

extension InMemoryProtocolStore: SendLogStore {
    /// `true`: `commit(_:)` applies `StoreCommit.sendLog` with the rest of the commit.
    public nonisolated var appliesSendLogInCommits: Bool { true }

    /// The entries of `chain` that expire after `now`, oldest first.
    public func loadSendLog(for chain: SendLogChain, now: Timestamp) -> [SendLogEntry] {
        sendLog.filter { $0.chain == chain && $0.expiresAt > now }
    }

    /// Applies `changes` (expired and removed first, then the added, then the bound).
    public func applySendLog(_ changes: SendLogChanges) {
        // Entries are kept in the order they were logged, so their expiry increases (unless the
        // clock went back: such an entry goes with the next ones, and `loadSendLog` skips it).
        if let expiry = changes.expiringAt {
            sendLog.removeFirst(sendLog.firstIndex { $0.expiresAt > expiry } ?? sendLog.count)
        }
        if !changes.removedChains.isEmpty {
            let removed = Set(changes.removedChains)
            sendLog.removeAll { removed.contains($0.chain) }
        }
        for peer in changes.removedPeers {
            sendLog.removeAll { entry in
                guard case let .pairwise(recipient, _) = entry.chain, recipient.userID == peer.userID else { return false }
                return peer.identityKey == nil || entry.peerIdentityKey != peer.identityKey
            }
        }
        for entry in changes.added {
            sendLog.append(entry.withID(nextSendLogID))
            nextSendLogID += 1
        }
        // Only the entries among the newest `maximum` ids logged stay (ids increase).
        if let maximum = changes.maximumEntries, nextSendLogID > UInt64(maximum) {
            let oldestKept = nextSendLogID - UInt64(maximum)
            sendLog.removeFirst(sendLog.firstIndex { $0.id >= oldestKept } ?? sendLog.count)
        }
    }

    /// How many entries the send log holds (for tests).
    @_spi(Testing) public func sendLogCount() -> Int { sendLog.count }
}
