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
        do {
            let received = try await manager.receive(envelope, beforePersisting: { (received: ReceivedMessage) async throws(SessionError) in
                guard let plaintext = received.plaintext else { return }
                do {
                    try await store.appendArchivedMessage(
                        plaintext, messageID: "\(message)", conversationID: received.conversation,
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
            if case let .senderKeyDistribution(_, sender, _, _) = received {
                // Group messages from `sender` that came before its sender key decrypt now.
                for waiting in await waitingForSenderKey.take(from: sender) {
                    await deliver(waiting.message, from: waiting.from, envelope: waiting.text)
                }
            }
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
            // A group message ahead of its sender key: kept (unacknowledged) until the key arrives.
            say("waiting for the sender key of \(from) to decrypt a group message")
            await waitingForSenderKey.keep(Delivery(message: message, from: from, text: text))
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
        case let .senderKeyDistribution(group, _, _, _): return "group:\(group.name)"
        }
    }
}

/// A delivery kept for later.
struct Delivery: Sendable {
    let message: UInt64
    let from: ProtocolAddress
    let text: String
}

/// Group messages that arrived before their sender's sender key (`unknownChain`, disposition
/// `retryLater`), by sender, to run again once a distribution from that sender was processed.
actor WaitingDeliveries {
    private var deliveries: [ProtocolAddress: [Delivery]] = [:]

    func keep(_ delivery: Delivery) {
        deliveries[delivery.from, default: []].append(delivery)
    }

    func take(from sender: ProtocolAddress) -> [Delivery] {
        deliveries.removeValue(forKey: sender) ?? []
    }
}

extension GroupID {
    /// The group's name (the demo's group ids are UTF-8 names).
    var name: String { String(decoding: rawRepresentation, as: UTF8.self) }
}
