import Foundation
import RelayWire
import SessionKit

// What the client does with the envelopes the relay delivers: SessionKit's `MessageEnvelope`
// carries the sender, the kind and the group, and `SessionManager.receive` dispatches it, so the
// client never looks at type bytes or picks the decrypt call itself.

extension ChatClient {
    /// Processes delivery `message`, which the relay says came from `from`: decrypts it, keeps
    /// the plaintext in the store's archive before SessionKit persists the session or chain,
    /// prints it, and only then acknowledges it (decrypt → persist → acknowledge). An error is
    /// handled by its `disposition`.
    func deliver(_ message: UInt64, from: ProtocolAddress, envelope text: String) async {
        let envelope: MessageEnvelope
        do {
            envelope = try MessageEnvelope(text: text)
        } catch {
            say("dropped delivery \(message) from \(from): not an envelope (\(error))")
            await acknowledge(message)
            return
        }
        // The relay stamps the sender from the connection; an envelope claiming someone else is
        // dropped (SessionKit would refuse it anyway: the addresses are bound into the session).
        guard envelope.sender == from else {
            say("dropped delivery \(message) from \(from): its envelope claims \(envelope.sender)")
            await acknowledge(message)
            return
        }
        let store = store
        // A distribution may release several kept group messages: each gets its own archive id.
        let ids = ArchiveIDs(delivery: message)
        do {
            let received = try await manager.receive(envelope, beforePersisting: { (received: ReceivedMessage) async throws(SessionError) in
                guard let plaintext = received.plaintext else { return }
                do {
                    try await store.appendArchivedMessage(
                        plaintext, messageID: await ids.next(), conversationID: received.conversation,
                        timestamp: Int64(Date().timeIntervalSince1970 * 1000))
                } catch {
                    throw .storage("archive: \(error)")   // nothing is persisted: the relay delivers it again
                }
            })
            try await show(received)
            if exitsBeforeAcknowledging {
                say("exiting before acknowledging delivery \(message) (--exit-before-ack): the relay will deliver it again")
                exit(3)
            }
            await acknowledge(message)
        } catch let error as SessionError {
            await handle(error, delivery: message, from: from, text: text)
        } catch {
            say("could not show delivery \(message) from \(from): \(error)")
            await acknowledge(message)
        }
    }

    /// What the client does about a delivery that failed with `error`, following
    /// `SessionError.disposition`.
    private func handle(_ error: SessionError, delivery message: UInt64, from: ProtocolAddress, text: String) async {
        switch error.disposition {
        case .dropSilently:
            // Processed before (the client stopped between persisting and acknowledging).
            await acknowledge(message)
        case .drop:
            say("dropped a message from \(from): \(error)")
            await acknowledge(message)
        case .neverDecryptable, .startNewSession:
            say("a message from \(from) could not be decrypted (\(error))")
            await acknowledge(message)
        case .retryLater:
            // A group message ahead of its sender key: SessionKit keeps it in the store and
            // returns it with the sender key, so it is acknowledged now.
            say("waiting for the sender key of \(from) to decrypt a group message")
            await acknowledge(message)
        case .retry, .askUser:
            // Transient: not acknowledged, so the relay delivers it again on the next connection.
            say("kept a message from \(from) at the relay for later: \(error)")
        case .stopAndReport, .fixCaller:
            say("cannot process a message from \(from): \(error) (\(error.disposition)); left at the relay")
        }
    }

    private func acknowledge(_ message: UInt64) async {
        do { try await relay.acknowledge(message) } catch { say("acknowledging \(message) failed: \(error)") }
    }
}

extension ReceivedMessage {
    /// The archive conversation of a message: the peer's user id, or `group:NAME`.
    var conversation: String {
        switch self {
        case let .message(message): return message.sender.userID
        case let .groupMessage(message): return "group:\(message.group.name)"
        case let .senderKeyDistribution(group, _, _, _, _): return "group:\(group.name)"
        case let .undecryptable(failure): return failure.group.map { "group:\($0.name)" } ?? failure.sender.userID
        case let .retryNotice(outcome): return outcome.group.map { "group:\($0.name)" } ?? outcome.sender.userID
        }
    }
}

/// The archive ids of what one delivery hands to the app: the delivery's id, then `id.1`,
/// `id.2`… for the group messages a distribution releases.
actor ArchiveIDs {
    private let delivery: UInt64
    private var count = 0

    init(delivery: UInt64) { self.delivery = delivery }

    func next() -> String {
        defer { count += 1 }
        return count == 0 ? "\(delivery)" : "\(delivery).\(count)"
    }
}

extension GroupID {
    /// The group's name (the demo's group ids are UTF-8 names).
    var name: String { String(decoding: rawRepresentation, as: UTF8.self) }
}
