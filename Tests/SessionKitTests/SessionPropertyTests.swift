import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Random delivery schedules between two parties (seeded): messages are reordered within a
/// window, dropped, delivered twice, replayed and corrupted. Every genuine message must
/// decrypt exactly once, every other delivery must fail with the error SPEC §4 gives it,
/// and after each failure the receiver's serialized session, key draws and one-time
/// prekeys must be exactly what they were.
final class SessionPropertyTests: XCTestCase {
    private enum Party { case alice, bob }

    private struct Envelope {
        let bytes: [UInt8]
        let plaintext: [UInt8]
        let id: Int
        /// Whether this copy is a second delivery of a message (a network duplicate).
        let isCopy: Bool
    }

    private enum Corruption: CaseIterable { case ciphertextBit, typeByte, truncation, nonCanonicalKey }

    private struct Counters {
        var sent = 0, decrypted = 0, dropped = 0, duplicates = 0, replays = 0, corruptions = 0
    }

    func testRandomDeliverySchedulesDecryptEveryGenuineMessageExactlyOnce() throws {
        var rng = SplitMix64(seed: 0x5E55_1011)
        var conversation = try Conversation(seed: 41)
        var inFlight: [Party: [Envelope]] = [.alice: [], .bob: []]      // keyed by receiver
        var delivered: [Party: [Envelope]] = [.alice: [], .bob: []]
        var decryptedIDs = Set<Int>()
        var counters = Counters()
        let total = 10_000
        let window = 8
        var sender = Party.alice

        func receive(_ envelope: [UInt8], by party: Party) throws(SessionError) -> [UInt8] {
            party == .alice ? try conversation.aliceReceives(envelope) : try conversation.bobReceives(envelope)
        }

        /// Delivers bytes that must fail; checks the error and that nothing changed.
        func deliverExpectingFailure(_ bytes: [UInt8], to party: Party, expected: SessionError?, _ what: String) {
            let before = conversation.snapshot
            do {
                _ = try receive(bytes, by: party)
                XCTFail("\(what) decrypted")
            } catch {
                if let expected { XCTAssertEqual(error, expected, what) }
            }
            XCTAssertEqual(conversation.snapshot, before, "\(what) changed the state")
        }

        /// The error a replay must give: duplicateMessage on the receiver's current chain,
        /// some error on an older one (SPEC §4).
        func replayError(_ bytes: [UInt8], to party: Party) -> SessionError? {
            let session = party == .alice ? conversation.alice : conversation.bob
            guard let message = try? IncomingMessage(serialized: bytes) else { return nil }
            return message.ratchetMessage.ratchetKey == session?.ratchet.remoteRatchetKey ? .duplicateMessage : nil
        }

        while counters.sent < total || !(inFlight[.alice]?.isEmpty ?? true) || !(inFlight[.bob]?.isEmpty ?? true) {
            let roll = Int.random(in: 0 ..< 100, using: &rng)
            if counters.sent < total, roll < 45 {
                if Int.random(in: 0 ..< 100, using: &rng) < 30 { sender = sender == .alice ? .bob : .alice }
                if sender == .bob, conversation.bob == nil { sender = .alice }
                let text = plaintext(counters.sent, length: Int.random(in: 0 ..< 90, using: &rng))
                let bytes = sender == .alice ? try conversation.aliceSends(text) : try conversation.bobSends(text)
                let receiver: Party = sender == .alice ? .bob : .alice
                inFlight[receiver, default: []].append(Envelope(bytes: bytes, plaintext: text, id: counters.sent, isCopy: false))
                counters.sent += 1
                continue
            }
            let candidates = [Party.alice, .bob].filter { !(inFlight[$0]?.isEmpty ?? true) }
            guard let receiver = candidates.randomElement(using: &rng), var queue = inFlight[receiver] else { continue }
            let index = Int.random(in: 0 ..< min(window, queue.count), using: &rng)
            let envelope = queue[index]
            let action = Int.random(in: 0 ..< 100, using: &rng)

            if envelope.isCopy {
                queue.remove(at: index)
                counters.duplicates += 1
                deliverExpectingFailure(envelope.bytes, to: receiver, expected: replayError(envelope.bytes, to: receiver), "duplicate \(envelope.id)")
            } else if action < 5 {
                queue.remove(at: index)
                counters.dropped += 1
            } else if action < 13 {
                counters.corruptions += 1
                let (bytes, expected) = corrupt(envelope.bytes, using: &rng)
                deliverExpectingFailure(bytes, to: receiver, expected: expected, "corrupted \(envelope.id)")
            } else if action < 19, let old = delivered[receiver]?.randomElement(using: &rng) {
                counters.replays += 1
                deliverExpectingFailure(old.bytes, to: receiver, expected: replayError(old.bytes, to: receiver), "replay of \(old.id)")
            } else {
                queue.remove(at: index)
                do {
                    let decrypted = try receive(envelope.bytes, by: receiver)
                    XCTAssertEqual(decrypted, envelope.plaintext, "message \(envelope.id)")
                    XCTAssertTrue(decryptedIDs.insert(envelope.id).inserted, "message \(envelope.id) decrypted twice")
                    counters.decrypted += 1
                } catch {
                    XCTFail("genuine message \(envelope.id) failed: \(error)")
                    return
                }
                delivered[receiver, default: []].append(envelope)
                if delivered[receiver, default: []].count > 64 { delivered[receiver]?.removeFirst() }
                if action >= 96 {   // the network delivers this one again later
                    queue.append(Envelope(bytes: envelope.bytes, plaintext: envelope.plaintext, id: envelope.id, isCopy: true))
                }
            }
            inFlight[receiver] = queue
        }

        XCTAssertEqual(counters.sent, total)
        XCTAssertEqual(counters.decrypted + counters.dropped, total, "every message decrypted once or was dropped")
        XCTAssertEqual(decryptedIDs.count, counters.decrypted)
        XCTAssertGreaterThan(counters.dropped, 100)
        XCTAssertGreaterThan(counters.duplicates, 100)
        XCTAssertGreaterThan(counters.replays, 100)
        XCTAssertGreaterThan(counters.corruptions, 100)
    }

    /// A corrupted copy of an undelivered genuine message and the error it must give.
    private func corrupt(_ bytes: [UInt8], using rng: inout SplitMix64) -> ([UInt8], SessionError) {
        let headerStart = bytes.first == WireType.preKeyMessage ? (bytes[69] == 0x01 ? 74 : 70) : 0
        let bodyStart = headerStart + RatchetMessage.headerByteCount
        switch Corruption.allCases.randomElement(using: &rng) ?? .ciphertextBit {
        case .ciphertextBit:
            return (flipped(bytes, at: Int.random(in: bodyStart ..< bytes.count, using: &rng), bit: Int.random(in: 0 ..< 8, using: &rng)), .invalidMessage)
        case .typeByte:
            // Any byte but the two valid ones (0x21, 0x22); version 1's 0x01 and 0x02 included.
            let invalid = (UInt8(0) ... 0xFF).filter { $0 != WireType.ratchetMessage && $0 != WireType.preKeyMessage }
            return (replacing(bytes, at: 0, with: [invalid.randomElement(using: &rng) ?? 0]), .unsupportedVersion)
        case .truncation:
            return (Array(bytes.prefix(headerStart + Int.random(in: 0 ..< RatchetMessage.minimumByteCount, using: &rng))), .invalidMessage)
        case .nonCanonicalKey:
            return (flipped(bytes, at: headerStart + 32, bit: 7), .invalidKey)
        }
    }
}
