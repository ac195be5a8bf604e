/// What a hashed row key identifies (`ValueSealer.rowKey(_:in:)`). Each domain hashes under its
/// own label, so the same id in two roles (a user id and a conversation id that happen to be
/// equal) gives unrelated hashes, and the file does not show that two tables name the same
/// contact.
struct RowKeyDomain: Sendable, Hashable {
    /// The label hashed in front of the id (ASCII, at most 255 bytes).
    let label: String

    /// An address (`ProtocolAddress.encoded`) in the trust table.
    static let trustAddress = RowKeyDomain(label: "trust.address")
    /// A conversation id in the archive.
    static let archiveConversation = RowKeyDomain(label: "archive.conversation")
    /// A message id in the archive (hashed with its conversation id, so equal message ids in two
    /// conversations do not match).
    static let archiveMessage = RowKeyDomain(label: "archive.message")

    // Sessions and sender keys: for example `static let sessionUser = RowKeyDomain(label:
    // "sessions.user")` (hash the user id's UTF-8 bytes, keep the device id in clear so that
    // `deviceIDs(ofUser:)` is one indexed query), `senderKeyGroup` for `GroupID`'s bytes and
    // `senderKeySender` for the sender's encoded address.
}
