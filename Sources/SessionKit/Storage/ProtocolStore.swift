/// Everything a `SessionManager` stores, and the one write each of its operations makes.
///
/// Reads go through the protocols this one refines; every write of an operation (a session,
/// the prekeys a prekey message used up, sender-key chains, and, for a store that keeps the
/// trust records, the peer's identity key) goes through `commit(_:)`, one transaction that
/// compares and swaps each state's generation (`StoreCommit`). `InMemoryProtocolStore` is the
/// reference implementation; `SessionKitSQLite`'s `SQLiteProtocolStore` keeps everything in an
/// encrypted SQLite file.
///
/// A store of your own must keep the contract of `commit(_:)`; the
/// `SessionKitStoreConformance` product checks it (run it in your tests).
public protocol ProtocolStore: SessionStore, IdentityKeyStore, PreKeyStore, SenderKeyStore, GroupStore {
    /// Applies every write of `commit` atomically, or none:
    /// - each state is written only when its stored generation equals the state's `generation`
    ///   (no stored state counts as generation 0), and is stored with generation + 1 (a state
    ///   written where an earlier one was deleted starts above every generation the deleted
    ///   one had, so a copy from before the deletion never matches again);
    /// - when `StoreCommit.changesPreKeys`, the stored prekeys are updated with
    ///   `StoreCommit.applyPreKeyChanges(to:)` (no stored prekeys: `unknownPreKey`) and the
    ///   replay record `StoreCommit.baseKeyRecord` is added (one already held: `staleState`);
    /// - a group's members replace the stored ones; a pending group message is kept (with the
    ///   next id; beyond `PendingGroupMessage.maximumPerSender` from its sender in its group the
    ///   oldest are dropped); released pending messages are deleted, and so are those expiring
    ///   at or before `expiringPendingGroupMessages`; a receiver state's chain ids are indexed
    ///   for `holdsReceiverChain(_:)`;
    /// - the send log's changes (`StoreCommit.sendLog`) are applied only by a store that is a
    ///   `SendLogStore` whose `appliesSendLogInCommits` is true;
    /// - the identity write is applied only when `appliesIdentityRecords` is true, last.
    /// - Throws: `SessionError.staleState` when a generation does not match or the replay
    ///   record is already held (another writer got there first: reload and retry),
    ///   `.unknownPreKey` when a one-time prekey the commit uses up is no longer held (a
    ///   one-time prekey creates at most one session) or its signed prekey's record is full,
    ///   `.storage` when the backend fails; nothing changed in every case.
    func commit(_ commit: StoreCommit) async throws(SessionError)

    /// Whether `commit(_:)` records `StoreCommit.identity` in a trust store this store keeps
    /// itself, in the same transaction (a `SessionManager` whose trust evaluator is this store
    /// then records identity keys through the commit). `false` by default: the manager then
    /// records them with its trust evaluator after the commit.
    var appliesIdentityRecords: Bool { get }
}

extension ProtocolStore {
    /// `false`: the store does not keep trust records.
    public var appliesIdentityRecords: Bool { false }
}
