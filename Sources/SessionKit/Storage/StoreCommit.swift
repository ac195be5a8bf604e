import SignalPrimitives

/// Everything one `SessionManager` operation writes, committed by `ProtocolStore.commit(_:)`
/// in one transaction: either all of it is stored or none of it.
///
/// Each written state carries the store generation it was loaded with (`SessionRecord`,
/// `SenderKeySendingChain` and `SenderKeyReceiverState` all have `generation`). The store
/// writes it only when the stored generation is still that one (0: none stored), and stores
/// it with generation + 1 (above every generation a deleted predecessor had); any mismatch
/// refuses the whole commit with
/// `SessionError.staleState`. So a stale state (loaded before another write to the same store,
/// by a second process on the same file, or simply held too long) can never replace a newer
/// state: no message key is used twice and no consumed key comes back. This holds within one
/// store; it does not detect a store replaced as a whole by an older copy of itself (a
/// restored backup, a file copied back): the generations go back with the states, and the
/// store cannot tell (see the SessionKitSQLite article "Persistence").
public struct StoreCommit: Sendable {
    /// A session record to store for a peer device.
    public struct SessionWrite: Sendable {
        /// The peer device.
        public let address: ProtocolAddress
        /// The record, with the generation it was loaded with.
        public let record: SessionRecord
    }

    /// Our sending chain to store for a group.
    public struct SendingChainWrite: Sendable {
        /// The group.
        public let group: GroupID
        /// The chain, with the generation it was loaded with (0 for a new group).
        public let chain: SenderKeySendingChain
    }

    /// The chains received from a sender in a group, to store.
    public struct ReceiverStateWrite: Sendable {
        /// The group.
        public let group: GroupID
        /// The member device that sent the chains.
        public let sender: ProtocolAddress
        /// The chains, with the generation they were loaded with.
        public let state: SenderKeyReceiverState
    }

    /// A peer's identity key to record in the trust store (trust on first use; a different
    /// key replaces the recorded one and awaits the app's acceptance), as
    /// `IdentityTrustEvaluator.recordIdentity` does.
    public struct IdentityWrite: Sendable {
        /// The peer device.
        public let address: ProtocolAddress
        /// Its Ed25519 identity key.
        public let identityKey: Ed25519.PublicKey
    }

    /// A group's member devices, replacing the stored ones.
    public struct GroupMembersWrite: Sendable {
        /// The group.
        public let group: GroupID
        /// Its member devices (empty: the group has no members, its row is removed).
        public let members: Set<ProtocolAddress>
        /// The join points of members in our current sending chain (SPEC §9), replacing the
        /// stored ones: a member without one here has none (`GroupStore.loadGroupJoinPoints(for:)`).
        public let joinPoints: [ProtocolAddress: GroupJoinPoint]
    }

    /// The session records to store, at most one per peer device (usually one; several when
    /// one operation sends to many devices, as `SessionManager.distributeSenderKey(for:to:)`
    /// does). A store applies all of them or none: one stale record refuses the whole commit.
    public private(set) var sessions: [SessionWrite] = []
    /// The position of each device's write in `sessions`.
    private var sessionIndex: [ProtocolAddress: Int] = [:]
    /// The one-time prekeys to delete and the EK_A to record, when a prekey message ran X3DH
    /// (`applyPreKeyChanges(to:)`, `baseKeyRecord`).
    var preKeyConsumption: PreKeyConsumption?
    /// Our sending chain to store, if any.
    public var sendingChain: SendingChainWrite?
    /// A received chain state to store, if any (a group message, or a distribution message,
    /// possibly carried by the pairwise message stored in `session`).
    public var receiverState: ReceiverStateWrite?
    /// The identity key to record, applied only by a store that keeps the trust records
    /// itself (`ProtocolStore.appliesIdentityRecords`), after every other write succeeded.
    public var identity: IdentityWrite?
    /// A group's member devices to store, if any.
    public var groupMembers: GroupMembersWrite?
    /// A group message to keep until its distribution arrives (its `id` is ignored: the store
    /// assigns the next one). Beyond `PendingGroupMessage.maximumPerSender` messages from its
    /// sender in its group, the oldest are dropped.
    public var pendingGroupMessage: PendingGroupMessage?
    /// The ids of pending group messages to delete (handed out, or given up).
    public var releasedPendingGroupMessages: [UInt64] = []
    /// Pending group messages whose `expiresAt` is at or before this time are deleted.
    public var expiringPendingGroupMessages: Timestamp?
    /// The send log's changes (SPEC §9: the entry of a message sent, the entries a retry notice
    /// used), applied in this commit's transaction by a store that is the manager's
    /// `SendLogStore` and says so (`SendLogStore.appliesSendLogInCommits`); any other store
    /// ignores it (the manager then applies it with `SendLogStore.applySendLog(_:)`).
    public var sendLog: SendLogChanges?

    /// An empty commit.
    public init() {}

    /// Whether this commit changes the stored prekeys: a prekey message ran X3DH, so the
    /// one-time prekey and one-time KEM prekey it used must be deleted and its EK_A recorded,
    /// in the same transaction as the rest of the commit (`applyPreKeyChanges(to:)` and
    /// `baseKeyRecord`).
    public var changesPreKeys: Bool { preKeyConsumption != nil }

    /// The EK_A replay record to add when `changesPreKeys` (`nil` otherwise): the store adds
    /// it in the commit's transaction, and refuses the whole commit with
    /// `SessionError.staleState` when it already holds it (another call or process completed
    /// X3DH with the same EK_A and signed prekey since this one looked the record up; the
    /// manager then runs the call again and finds the record: `duplicateMessage`).
    public var baseKeyRecord: BaseKeyRecord? {
        preKeyConsumption.map { BaseKeyRecord(signedPreKeyID: $0.signedPreKeyID, baseKey: $0.baseKey) }
    }

    /// Applies this commit's prekey changes to the stored prekeys `preKeys`: deletes the
    /// one-time prekey and one-time KEM prekey a prekey message used and counts its EK_A
    /// record under the signed prekey it named (`baseKeyRecord`, which the store adds itself).
    /// Does nothing when `changesPreKeys` is false. A store calls it inside the commit's
    /// transaction and stores the result with the other writes.
    /// - Throws: `SessionError.unknownPreKey` when the signed prekey or a one-time prekey it
    ///   names is no longer held (a one-time prekey creates at most one session: fail the
    ///   whole commit), or the signed prekey holds `ProtocolLimits.maximumRecordedBaseKeys`
    ///   records already; `preKeys` is then unchanged.
    public func applyPreKeyChanges(to preKeys: inout LocalPreKeys) throws(SessionError) {
        guard let consumption = preKeyConsumption else { return }
        try preKeys.apply(consumption)
    }

    /// Stores `record` for `address` (replacing a record this commit already stores for it).
    public mutating func store(_ record: consuming SessionRecord, for address: ProtocolAddress) {
        let write = SessionWrite(address: address, record: record)
        if let index = sessionIndex[address] {
            sessions[index] = write
        } else {
            sessionIndex[address] = sessions.count
            sessions.append(write)
        }
    }

    /// Makes room for `count` more session writes (one allocation for a batch).
    mutating func reserveSessionCapacity(_ count: Int) {
        sessions.reserveCapacity(sessions.count + count)
        sessionIndex.reserveCapacity(sessionIndex.count + count)
    }

    /// This commit without its session records (for stores and tests that split a commit).
    @_spi(Storage) public func removingSessions() -> StoreCommit {
        var commit = self
        commit.sessions = []
        commit.sessionIndex = [:]
        return commit
    }

    /// Stores our sending `chain` for `group`.
    public mutating func store(_ chain: SenderKeySendingChain, for group: GroupID) {
        sendingChain = SendingChainWrite(group: group, chain: chain)
    }

    /// Stores the chains received from `sender` in `group`.
    public mutating func store(_ state: SenderKeyReceiverState, for group: GroupID, sender: ProtocolAddress) {
        receiverState = ReceiverStateWrite(group: group, sender: sender, state: state)
    }

    /// Replaces the member devices of `group` with `members`, and their join points in our
    /// sending chain with `joinPoints` (points of devices that are not members are left out).
    public mutating func store(
        members: Set<ProtocolAddress>, joinPoints: [ProtocolAddress: GroupJoinPoint] = [:], for group: GroupID
    ) {
        groupMembers = GroupMembersWrite(group: group, members: members, joinPoints: joinPoints.filter { members.contains($0.key) })
    }

    /// Records `identityKey` for `address` in the trust store.
    public mutating func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) {
        identity = IdentityWrite(address: address, identityKey: identityKey)
    }
}
