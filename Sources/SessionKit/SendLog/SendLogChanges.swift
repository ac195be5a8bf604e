import SignalPrimitives

/// What one `SessionManager` operation changes in its send log, applied atomically by
/// `SendLogStore.applySendLog(_:)` or, for a store that takes them in its commits
/// (`SendLogStore.appliesSendLogInCommits`), in the operation's `ProtocolStore.commit(_:)`
/// (`StoreCommit.sendLog`), in the same transaction as the state it goes with.
///
/// Order: expired entries and removed chains go first, then the added entries are kept, then,
/// beyond `maximumEntries`, the oldest entries of the whole log go. A store may remove the
/// expired entries a few at a time, oldest first (entries are logged in time order);
/// `SendLogStore.loadSendLog(for:now:)` never returns one.
public struct SendLogChanges: Sendable, Hashable {
    /// Entries to keep (their `id` is ignored: the store assigns the next ones, in this order).
    public var added: [SendLogEntry] = []
    /// Chains whose entries are removed (used by a retry notice, or a chain that is no longer
    /// sent on).
    public var removedChains: [SendLogChain] = []
    /// Users whose pairwise entries under any identity key but the one named are removed (SPEC
    /// §9: accepting a new key for a user discards the entries sent under the old one).
    public var removedPeers: [SendLogPeerKeep] = []
    /// Entries whose `expiresAt` is at or before this time are removed.
    public var expiringAt: Timestamp?
    /// After the added entries are kept, only the entries among the newest this many ids
    /// stay (so at most this many; `nil`: no bound applied). Ids increase with every entry
    /// (a store may give an id again once every entry above it is gone), so the bound is one
    /// range deletion, whatever the log holds.
    public var maximumEntries: Int?

    /// No change.
    public init() {}

    /// Whether applying it changes nothing.
    public var isEmpty: Bool { added.isEmpty && removedChains.isEmpty && removedPeers.isEmpty && expiringAt == nil }
}

/// A user whose pairwise send-log entries go unless they were sent under `identityKey`
/// (`SendLogChanges.removedPeers`).
public struct SendLogPeerKeep: Sendable, Hashable {
    /// The user id (every device of the user).
    public let userID: String
    /// The identity key whose entries stay (`nil`: none stays).
    public let identityKey: Ed25519.PublicKey?

    /// Removes `userID`'s entries under any other key than `identityKey`, or all of them
    /// when `identityKey` is `nil`.
    public init(userID: String, keeping identityKey: Ed25519.PublicKey?) {
        self.userID = userID
        self.identityKey = identityKey
    }
}
