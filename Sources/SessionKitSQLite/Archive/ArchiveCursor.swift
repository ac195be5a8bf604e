/// Where a page of the message archive starts: every message strictly older than the cursor
/// (newest first, ties on the timestamp broken by the keyed hash of the message id).
///
/// Take one from `ArchivePage.nextCursor` (or `ArchivedMessage.cursor`) to continue after a
/// page, or make one with `init(before:)` to start below a timestamp. A cursor is only
/// meaningful for the store and conversation it came from.
public struct ArchiveCursor: Sendable, Hashable, CustomStringConvertible {
    /// Messages older than this timestamp (or at it, when `messageHash` orders below) follow.
    public let timestamp: Int64
    /// The keyed hash of the message the cursor points after, or `nil` for "strictly before
    /// `timestamp`".
    let messageHash: [UInt8]?

    /// A cursor for every message with a timestamp strictly below `timestamp`.
    public init(before timestamp: Int64) {
        self.timestamp = timestamp
        messageHash = nil
    }

    /// A cursor just after the message with `messageHash` at `timestamp`.
    init(timestamp: Int64, messageHash: [UInt8]) {
        self.timestamp = timestamp
        self.messageHash = messageHash
    }

    /// The timestamp only (the hash is an opaque position).
    public var description: String {
        messageHash == nil ? "ArchiveCursor(before: \(timestamp))" : "ArchiveCursor(after a message at \(timestamp))"
    }
}
