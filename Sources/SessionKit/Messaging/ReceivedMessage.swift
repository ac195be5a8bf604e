/// What `SessionManager.receive(_:)` made of an incoming envelope.
public enum ReceivedMessage: Sendable, CustomStringConvertible {
    /// A pairwise message, decrypted (its sender, the sender's identity key and what the trust
    /// store observed about it are in the value).
    case message(DecryptedMessage)
    /// A group message, decrypted.
    case groupMessage(DecryptedGroupMessage)
    /// A member's sender key for a group, stored: its group messages now decrypt.
    /// `identityObservation` is what the trust store observed about the pairwise session's
    /// identity key; `releasedMessages` are the group messages from that member that had
    /// arrived before it and were kept by the manager, now decrypted (oldest first): show them.
    /// `undecryptableMessages` are kept messages that turned out older than the distribution
    /// (sent before this device was given the chain, `messageKeyUnavailable`) or too far ahead
    /// of it: reported as each would be arriving after it (a placeholder, and the retry notice
    /// to send when one is due), never dropped silently.
    case senderKeyDistribution(
        group: GroupID, sender: ProtocolAddress, identityObservation: IdentityObservation, releasedMessages: [DecryptedGroupMessage],
        undecryptableMessages: [UndecryptableMessage])
    /// A message that could not be decrypted because this device's state for its sender is
    /// lost or unusable (SPEC §9): show a placeholder, send its `retryNotice` (when there is
    /// one) and start a new session when it says so. Acknowledge the message.
    case undecryptable(UndecryptableMessage)
    /// A retry notice from a device that could not decrypt a message from this one, and what
    /// the manager did about it (`RetryNoticeOutcome.action`).
    case retryNotice(RetryNoticeOutcome)

    /// The sending device.
    public var sender: ProtocolAddress {
        switch self {
        case let .message(message): return message.sender
        case let .groupMessage(message): return message.sender
        case let .senderKeyDistribution(_, sender, _, _, _): return sender
        case let .undecryptable(message): return message.sender
        case let .retryNotice(outcome): return outcome.sender
        }
    }

    /// The plaintext of a pairwise or group message, `nil` for the other cases.
    public var plaintext: [UInt8]? {
        switch self {
        case let .message(message): return message.plaintext
        case let .groupMessage(message): return message.plaintext
        case .senderKeyDistribution, .undecryptable, .retryNotice: return nil
        }
    }

    /// The kind and sender, never the plaintext.
    public var description: String {
        switch self {
        case let .message(message): return "ReceivedMessage(\(message))"
        case let .groupMessage(message): return "ReceivedMessage(\(message))"
        case let .senderKeyDistribution(group, sender, observation, released, undecryptable):
            return "ReceivedMessage(sender key of \(sender) in \(group), \(observation), \(released.count) released, "
                + "\(undecryptable.count) undecryptable)"
        case let .undecryptable(message): return "ReceivedMessage(\(message))"
        case let .retryNotice(outcome): return "ReceivedMessage(\(outcome))"
        }
    }
}

/// A group message `SessionManager` decrypted.
public struct DecryptedGroupMessage: Sendable, CustomStringConvertible {
    /// The group.
    public let group: GroupID
    /// The sending device.
    public let sender: ProtocolAddress
    /// The plaintext.
    public let plaintext: [UInt8]

    /// A decrypted group message.
    public init(group: GroupID, sender: ProtocolAddress, plaintext: [UInt8]) {
        self.group = group
        self.sender = sender
        self.plaintext = plaintext
    }

    /// The group, sender and size, never the plaintext.
    public var description: String { "DecryptedGroupMessage(\(sender) in \(group), \(plaintext.count) bytes)" }
}
