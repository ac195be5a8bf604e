/// Where session records live, one per peer device (`ProtocolAddress`).
///
/// Implementations must be safe to call concurrently and make each call atomic. Records are
/// written through `ProtocolStore.commit(_:)`, with their generation compared and swapped;
/// a loaded record carries its stored generation (`SessionRecord.generation`).
public protocol SessionStore: Sendable {
    /// The record for `address`, or `nil` when none is stored.
    /// - Throws: `SessionError.storage` when the backend fails (or `.invalidPayload` /
    ///   `.unsupportedVersion` for a stored blob that does not load).
    func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord?

    /// Deletes the record for `address` (nothing happens when there is none). A record written
    /// there later is loaded and committed as a new one (generation 0), and is stored above every
    /// generation the deleted record had (`ProtocolStore.commit(_:)`), so that a copy from
    /// before the deletion never matches again.
    /// - Throws: `SessionError.storage` when the backend fails.
    func deleteSession(for address: ProtocolAddress) async throws(SessionError)

    /// The device ids of `userID` (compared as UTF-8 bytes) that have a stored record, ascending.
    /// - Throws: `SessionError.storage` when the backend fails.
    func deviceIDs(ofUser userID: String) async throws(SessionError) -> [UInt32]

    /// The records for `addresses`, in their order (`nil` where none is stored), as
    /// `loadSession(for:)` of each: one call for a batch (`SessionManager.encrypt(_:toDevices:)`).
    /// The default calls `loadSession(for:)` for each; a store that is an actor answers in one
    /// call to it.
    /// - Throws: the errors of `loadSession(for:)`.
    func loadSessions(for addresses: [ProtocolAddress]) async throws(SessionError) -> [SessionRecord?]
}

extension SessionStore {
    /// `loadSession(for:)` for each address, in order.
    public func loadSessions(for addresses: [ProtocolAddress]) async throws(SessionError) -> [SessionRecord?] {
        var records: [SessionRecord?] = []
        records.reserveCapacity(addresses.count)
        for address in addresses { records.append(try await loadSession(for: address)) }
        return records
    }
}

/// A session store that keeps what it last read or wrote of each record and can hand it out
/// for a change without a trip to its backend (`SQLiteProtocolStore`).
@_spi(Storage) public protocol CachingSessionStore: SessionStore {
    /// The record for `address` to be changed and committed: possibly the record as the store
    /// last read or wrote it, without asking its backend whether another writer changed it
    /// since, because `ProtocolStore.commit(_:)` compares the generation and refuses a stale
    /// record (`staleState`), after which the manager loads again with `loadSession(for:)`.
    /// With `currentSessionSuffices`, the store may return a record with its current session
    /// only (`SessionRecord.omitsPreviousSessions`) when it has one, for a call that needs no
    /// other (an encryption, a message the current session decrypts); it commits only the
    /// current session of such a record.
    /// - Throws: the errors of `loadSession(for:)`.
    func loadSessionForUpdate(for address: ProtocolAddress, currentSessionSuffices: Bool) async throws(SessionError) -> SessionRecord?
}
