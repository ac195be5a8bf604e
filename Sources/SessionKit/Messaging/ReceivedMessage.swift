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
    case senderKeyDistribution(
        group: GroupID, sender: ProtocolAddress, identityObservation: IdentityObservation, releasedMessages: [DecryptedGroupMessage])

    /// The sending device.
    public var sender: ProtocolAddress {
        switch self {
        case let .message(message): return message.sender
        case let .groupMessage(message): return message.sender
        case let .senderKeyDistribution(_, sender, _, _): return sender
        }
    }

    /// The plaintext of a pairwise or group message, `nil` for a distribution.
    public var plaintext: [UInt8]? {
        switch self {
        case let .message(message): return message.plaintext
        case let .groupMessage(message): return message.plaintext
        case .senderKeyDistribution: return nil
        }
    }

    /// The kind and sender, never the plaintext.
    public var description: String {
        switch self {
        case let .message(message): return "ReceivedMessage(\(message))"
        case let .groupMessage(message): return "ReceivedMessage(\(message))"
        case let .senderKeyDistribution(group, sender, observation, released):
            return "ReceivedMessage(sender key of \(sender) in \(group), \(observation), \(released.count) released)"
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
