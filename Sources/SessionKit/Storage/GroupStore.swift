/// Where a device keeps what it knows of its groups besides the chains (`SenderKeyStore`): each
/// group's member devices, as the app set them (`SessionManager.setGroupMembers(_:for:)`), and
/// the group messages that wait for the distribution of their chain
/// (`PendingGroupMessage`).
///
/// Implementations must be safe to call concurrently and make each call atomic. Members and
/// pending messages are written through `ProtocolStore.commit(_:)` (`StoreCommit.groupMembers`,
/// `.pendingGroupMessage`, `.releasedPendingGroupMessages`, `.expiringPendingGroupMessages`),
/// in the same transaction as the rest of the commit.
public protocol GroupStore: Sendable {
    /// The member devices of `group` (empty when the app never set any).
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadGroupMembers(for group: GroupID) async throws(SessionError) -> Set<ProtocolAddress>

    /// The messages from `sender` in `group` waiting for a distribution, oldest first.
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadPendingGroupMessages(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> [PendingGroupMessage]

    /// Whether a chain with the id `chainID` (32 bytes, SPEC §5) is held from any sender in any
    /// group: a message of a held chain that its (group, sender) does not hold was relabelled
    /// to another group or re-attributed to another sender, and is dropped instead of kept.
    /// - Throws: `SessionError.storage` when the backend fails.
    func holdsReceiverChain(_ chainID: [UInt8]) async throws(SessionError) -> Bool

    /// The join points of `group`'s members in our sending chain (SPEC §9), as last written
    /// with the members (`StoreCommit.GroupMembersWrite.joinPoints`). A store that does not
    /// keep them may return none: a group retry notice then re-sends no logged message, which
    /// is safe but recovers less.
    /// - Throws: `SessionError.storage` when the backend fails.
    func loadGroupJoinPoints(for group: GroupID) async throws(SessionError) -> [ProtocolAddress: GroupJoinPoint]
}

/// A group message kept by the store until the distribution of its chain arrives
/// (`SessionManager` hands it out then, decrypted) or until it expires.
public struct PendingGroupMessage: Sendable, Hashable, CustomStringConvertible {
    /// The store's id for it, increasing in the order messages were kept (0 in a write: the
    /// store assigns it).
    public let id: UInt64
    /// The group it arrived for.
    public let group: GroupID
    /// The member device it arrived from.
    public let sender: ProtocolAddress
    /// The sender-key message, as it arrived (SPEC §5: ciphertext).
    public let message: [UInt8]
    /// When it is dropped if its distribution has not arrived.
    public let expiresAt: Timestamp

    /// Creates a pending message.
    public init(id: UInt64, group: GroupID, sender: ProtocolAddress, message: [UInt8], expiresAt: Timestamp) {
        self.id = id
        self.group = group
        self.sender = sender
        self.message = message
        self.expiresAt = expiresAt
    }

    /// The most messages kept from one sender in one group; beyond it the oldest is dropped.
    public static let maximumPerSender = 256

    /// The id, group, sender and size.
    public var description: String { "PendingGroupMessage(\(id), \(sender) in \(group), \(message.count) bytes)" }
}
