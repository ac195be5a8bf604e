import SignalPrimitives

/// A message read back from the archive. The plaintext is in wiping storage; `description`
/// shows neither it nor the message id.
public struct ArchivedMessage: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The message id the app gave when appending it.
    public let messageID: String
    /// The timestamp the app gave (stored in clear).
    public let timestamp: Int64
    /// The plaintext, wiped when the last copy goes.
    public let plaintext: SecureBytes
    /// The position just after this message, to continue paging from it.
    public let cursor: ArchiveCursor

    /// Creates a message (the archive creates them when paging).
    init(messageID: String, timestamp: Int64, plaintext: SecureBytes, cursor: ArchiveCursor) {
        self.messageID = messageID
        self.timestamp = timestamp
        self.plaintext = plaintext
        self.cursor = cursor
    }

    /// A redacted description: the timestamp and the plaintext length.
    public var description: String { "ArchivedMessage(at \(timestamp), \(plaintext.count) bytes, redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
}
