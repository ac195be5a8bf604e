/// Where a `SessionManager` keeps its send log (SPEC §9): the plaintexts it sent, per recipient
/// device and chain position, for a bounded time (`SendLogPolicy`), so that after a retry notice
/// the app can send them again in a new session.
///
/// `InMemoryProtocolStore` and `SessionKitSQLite`'s `SQLiteProtocolStore` (a sealed table) are
/// both send-log stores that take the log's changes in their commits: give the manager the same
/// object as its store and its log (`SessionManager.init(…, sendLog:)`), and each message's
/// entry is written in the transaction that stores the advanced chain, not in a second one.
///
/// Implementations must be safe to call concurrently and make each call atomic, and must remove
/// entries they drop so that they cannot be read back (`SQLiteProtocolStore` deletes with
/// `secure_delete`).
public protocol SendLogStore: Sendable {
    /// The entries of `chain` that expire after `now`, oldest first.
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadSendLog(for chain: SendLogChain, now: Timestamp) async throws(SessionError) -> [SendLogEntry]

    /// Applies `changes` atomically (see `SendLogChanges` for the order).
    /// - Throws: `SessionError.storage` when the backend fails; nothing changed then.
    func applySendLog(_ changes: SendLogChanges) async throws(SessionError)

    /// Whether this store, when it is also the manager's `ProtocolStore`, applies
    /// `StoreCommit.sendLog` in `commit(_:)`'s transaction. `false` by default: the manager then
    /// applies the changes with `applySendLog(_:)` right after the commit (a second write per
    /// message, and a crash between the two loses that entry).
    var appliesSendLogInCommits: Bool { get }
}

extension SendLogStore {
    /// `false`: the changes are applied with `applySendLog(_:)` after the commit.
    public var appliesSendLogInCommits: Bool { false }
}
