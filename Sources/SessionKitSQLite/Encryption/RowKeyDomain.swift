/// What a hashed row key identifies (`ValueSealer.rowKey(_:in:)`). Each domain hashes under its
/// own label, so the same id in two roles (a user id and a conversation id that happen to be
/// equal) gives unrelated hashes, and the file does not show that two tables name the same
/// contact.
struct RowKeyDomain: Sendable, Hashable {
    /// The label hashed in front of the id (ASCII, at most 255 bytes).
    let label: String

    /// An address (`ProtocolAddress.encoded`) in the schema-1 trust table (per device).
    static let trustAddress = RowKeyDomain(label: "trust.address")
    /// A user id (UTF-8) in `trust_users`.
    static let trustUser = RowKeyDomain(label: "trust.user")
    /// A conversation id in the archive.
    static let archiveConversation = RowKeyDomain(label: "archive.conversation")
    /// A message id in the archive (hashed with its conversation id, so equal message ids in two
    /// conversations do not match).
    static let archiveMessage = RowKeyDomain(label: "archive.message")

    /// A user id (UTF-8) in `sessions`; the device id stays in clear next to it, so that
    /// `deviceIDs(ofUser:)` is one indexed query.
    static let sessionUser = RowKeyDomain(label: "sessions.user")
    /// A session's identity within its record (role byte and EK_A).
    static let sessionState = RowKeyDomain(label: "sessions.state")
    /// A skipped key's slot (ratchet key and counter).
    static let skippedSlot = RowKeyDomain(label: "sessions.skipped")
    /// A group id in the sender-key tables.
    static let senderKeyGroup = RowKeyDomain(label: "senderkeys.group")
    /// A group id in `group_members`.
    static let groupMembers = RowKeyDomain(label: "groups.members")
    /// A chain id in `receiver_chains`.
    static let receiverChain = RowKeyDomain(label: "senderkeys.chain")
    /// A sender's address (`ProtocolAddress.encoded`) in `receiver_states`.
    static let senderKeySender = RowKeyDomain(label: "senderkeys.sender")
    /// A signed prekey id (`u32(spk_id)`) in `prekey_replay_records`.
    static let replaySignedPreKey = RowKeyDomain(label: "prekeys.replay.spk")
    /// A send-log chain (`SendLogChain.identifyingBytes`) in `send_log`.
    static let sendLogChain = RowKeyDomain(label: "sendlog.chain")
    /// A pairwise send-log entry's recipient user (UTF-8 user id) in `send_log.user_hash`.
    static let sendLogUser = RowKeyDomain(label: "sendlog.user")
    /// A pairwise send-log entry's recipient user and identity key (`u8(length) || user id ||
    /// key`) in `send_log.peer_hash`.
    static let sendLogPeer = RowKeyDomain(label: "sendlog.peer")
    /// A replay record (`u32(spk_id) || EK_A`) in `prekey_replay_records`.
    static let replayBaseKey = RowKeyDomain(label: "prekeys.replay.record")
    /// The file's identity in its store epoch (`StoreEpoch.fileID`: the file salt, hashed).
    static let storeEpochFile = RowKeyDomain(label: "store.epoch.file")
}
