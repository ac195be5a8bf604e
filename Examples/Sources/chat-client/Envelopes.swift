import Foundation
import RelayWire
import SessionKit

// Everything the client does with envelopes is in this file: wrapping what SessionKit encrypts
// for the relay, and dispatching what arrives to the right SessionKit call.

/// The text the relay carries for one message: who sent it, what kind of message it is, the
/// group of a group message or sender-key distribution, and the ciphertext. The relay never
/// opens it.
struct Envelope: Codable, Sendable {
    /// What `body` holds.
    enum Kind: String, Codable, Sendable {
        /// A pairwise message (Double Ratchet or prekey message).
        case message
        /// A pairwise message whose plaintext is our sender key for `group`.
        case senderKeyDistribution
        /// A sender-key message for `group`.
        case groupMessage
    }

    var sender: DeviceName
    var kind: Kind
    var group: String?
    /// The ciphertext, base64.
    var body: String

    /// The envelope as JSON text.
    func encodedText() throws -> String { try WireCoding.text(self) }
}

/// What an envelope turned out to be, once SessionKit processed it (and persisted the result).
enum Received: Sendable {
    case message(DecryptedMessage)
    case groupMessage(group: GroupID, sender: ProtocolAddress, plaintext: [UInt8])
    case senderKeyDistribution(group: GroupID, sender: ProtocolAddress)
}

extension ChatClient {
    /// The envelope text for a pairwise message.
    func envelope(message ciphertext: [UInt8]) throws -> String {
        try Envelope(sender: me, kind: .message, group: nil, body: WireCoding.base64(ciphertext)).encodedText()
    }

    /// The envelope text for a pairwise message carrying our sender key for `group`.
    func envelope(distribution ciphertext: [UInt8], group: GroupID) throws -> String {
        try Envelope(sender: me, kind: .senderKeyDistribution, group: group.name, body: WireCoding.base64(ciphertext)).encodedText()
    }

    /// The envelope text for a group message.
    func envelope(groupMessage ciphertext: [UInt8], group: GroupID) throws -> String {
        try Envelope(sender: me, kind: .groupMessage, group: group.name, body: WireCoding.base64(ciphertext)).encodedText()
    }

    /// Opens `text` (delivered from `from`, as the relay says) and runs the SessionKit call its
    /// kind needs. `keep` runs after decryption and before SessionKit persists anything
    /// (decrypt → keep → persist → acknowledge), with the plaintext and the conversation it
    /// belongs to.
    func receive(
        _ text: String, from: DeviceName,
        keeping keep: @escaping @Sendable (_ plaintext: [UInt8], _ conversation: String) async throws(SessionError) -> Void
    ) async throws(SessionError) -> Received {
        guard let envelope = try? WireCoding.decode(Envelope.self, from: text),
              let body = WireCoding.bytes(base64: envelope.body) else { throw .invalidMessage }
        // The relay stamps the sender from the connection; an envelope claiming someone else is
        // dropped (SessionKit would refuse it anyway: the addresses are bound into the session).
        guard envelope.sender == from else { throw .invalidMessage }
        let sender = try ProtocolAddress(userID: from.user, deviceID: from.device)
        switch envelope.kind {
        case .message:
            let message = try await manager.decrypt(body, from: sender, beforePersisting: {
                (message: DecryptedMessage) async throws(SessionError) in
                try await keep(message.plaintext, sender.userID)
            })
            return .message(message)
        case .senderKeyDistribution:
            guard let name = envelope.group else { throw .invalidMessage }
            let group = try GroupID(name)
            try await manager.processSenderKeyDistribution(encrypted: body, for: group, from: sender)
            return .senderKeyDistribution(group: group, sender: sender)
        case .groupMessage:
            guard let name = envelope.group else { throw .invalidMessage }
            let group = try GroupID(name)
            let plaintext = try await manager.groupDecrypt(body, for: group, from: sender, beforePersisting: {
                (plaintext: [UInt8]) async throws(SessionError) in
                try await keep(plaintext, "group:\(name)")
            })
            return .groupMessage(group: group, sender: sender, plaintext: plaintext)
        }
    }

    /// What to do with a delivery that failed with `error`: acknowledge it (the relay deletes
    /// it) or leave it queued to be delivered again.
    func disposition(of error: SessionError) -> Disposition {
        switch error {
        case .duplicateMessage:
            return .acknowledge(quietly: true)   // processed before (we died before acknowledging)
        case .storage, .staleState, .unknownChain, .reentrantCall:
            return .retryLater
        default:
            return .acknowledge(quietly: false)  // it will never decrypt here: drop it
        }
    }
}

/// What the client does with an envelope it could not process.
enum Disposition {
    /// Acknowledge it: it will never be processed (`quietly`: it already was).
    case acknowledge(quietly: Bool)
    /// Leave it at the relay, which delivers it again on the next connection.
    case retryLater
}

extension GroupID {
    /// The group's name (the demo's group ids are UTF-8 names).
    var name: String { String(decoding: rawRepresentation, as: UTF8.self) }
}
