/// One page of a conversation in the archive, newest first.
public struct ArchivePage: Sendable {
    /// The messages, newest first (ties on the timestamp in a fixed order: by the keyed hash of
    /// the message id, descending).
    public let messages: [ArchivedMessage]
    /// Where the next (older) page starts, or `nil` when this page reached the oldest message.
    public let nextCursor: ArchiveCursor?
    /// How many rows in this page's range were skipped because their value does not open
    /// (damaged on disk). They never hide the messages around them; `deleteArchivedConversation`
    /// removes them.
    public let damagedCount: Int

    /// Creates a page (the archive creates them).
    init(messages: [ArchivedMessage], nextCursor: ArchiveCursor?, damagedCount: Int) {
        self.messages = messages
        self.nextCursor = nextCursor
        self.damagedCount = damagedCount
    }
}
