/// Where session records live, one per peer device (`ProtocolAddress`).
///
/// Implementations must be safe to call concurrently and make each call atomic. SessionKit
/// (`SessionManager`) never runs two read-modify-write sequences for the same address at once,
/// and writes a record only after the operation on it succeeded.
public protocol SessionStore: Sendable {
    /// The record for `address`, or `nil` when none is stored.
    /// - Throws: `SessionError.storage` when the backend fails (or `.invalidPayload` /
    ///   `.unsupportedVersion` for a stored blob that does not load).
    func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord?

    /// Stores `record` for `address`, replacing any earlier one.
    /// - Throws: `SessionError.storage` when the backend fails; the stored record is then the
    ///   earlier one.
    func storeSession(_ record: SessionRecord, for address: ProtocolAddress) async throws(SessionError)

    /// Deletes the record for `address` (nothing happens when there is none).
    /// - Throws: `SessionError.storage` when the backend fails.
    func deleteSession(for address: ProtocolAddress) async throws(SessionError)

    /// The device ids of `userID` (compared as UTF-8 bytes) that have a stored record, ascending.
    /// - Throws: `SessionError.storage` when the backend fails.
    func deviceIDs(ofUser userID: String) async throws(SessionError) -> [UInt32]
}
