import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @_spi(Storage) @testable import SessionKit

/// A session taken apart for a store that keeps its skipped keys in rows
/// (`serializedWithoutSkippedMessageKeys()`, `skippedMessageKeyEntries`) and put back together
/// (`init(serializedWithoutSkippedMessageKeys:skippedMessageKeys:)`).
final class SessionStatePartsTests: XCTestCase {
    /// Bob's session holding skipped keys of two of Alice's chains (two ratchet keys), in age
    /// order: keys 0…2 of her first chain, then 1…3 of her second.
    private func sessionWithKeysOfTwoChains() throws -> (Conversation, SessionState, late: [[UInt8]]) {
        var conversation = try Conversation()
        var late: [[UInt8]] = []
        for index in 0 ..< 4 { late.append(try conversation.aliceSends(plaintext(index))) }
        XCTAssertEqual(try conversation.bobReceives(late.removeLast()), plaintext(3))
        XCTAssertEqual(try conversation.aliceReceives(try conversation.bobSends(plaintext(10))), plaintext(10))
        for index in 20 ..< 24 { late.append(try conversation.aliceSends(plaintext(index))) }
        XCTAssertEqual(try conversation.bobReceives(late.removeLast()), plaintext(23))
        let bob = try XCTUnwrap(conversation.bob)
        XCTAssertEqual(bob.skippedMessageKeyCount, 6)
        return (conversation, bob, late)
    }

    func testASessionPutBackTogetherDecryptsEveryLateMessage() throws {
        var (conversation, bob, late) = try sessionWithKeysOfTwoChains()
        let entries = bob.skippedMessageKeyEntries
        XCTAssertEqual(Set(entries.map { Array($0.slot.prefix(32)) }).count, 2, "two ratchet keys")
        let rebuilt = try SessionState(serializedWithoutSkippedMessageKeys: bob.serializedWithoutSkippedMessageKeys(), skippedMessageKeys: entries)
        XCTAssertEqual(rebuilt.serialized(), bob.serialized(), "the same session, keys in the same order")
        conversation.bob = rebuilt
        // Out of order, across both chains.
        for (message, expected) in zip(late.reversed(), [22, 21, 20, 2, 1, 0]) {
            XCTAssertEqual(try conversation.bobReceives(message), plaintext(expected))
        }
        bob = try XCTUnwrap(conversation.bob)
        XCTAssertEqual(bob.skippedMessageKeyCount, 0)
    }

    func testARepeatedSlotIsRefused() throws {
        let (_, bob, _) = try sessionWithKeysOfTwoChains()
        let entries = bob.skippedMessageKeyEntries
        for (first, second) in [(0, 1), (1, 2), (0, 5), (3, 4)] {
            var repeated = entries
            repeated[second] = try SkippedMessageKeyEntry(slot: entries[first].slot, messageKey: entries[second].messageKey)
            XCTAssertThrowsError(try SessionState(
                serializedWithoutSkippedMessageKeys: bob.serializedWithoutSkippedMessageKeys(), skippedMessageKeys: repeated)) { error in
                XCTAssertEqual(error as? SessionError, .invalidPayload, "slot \(first) repeated at \(second)")
            }
        }
    }

    func testANonCanonicalRatchetKeyIsRefusedInEveryPosition() throws {
        let (_, bob, _) = try sessionWithKeysOfTwoChains()
        let entries = bob.skippedMessageKeyEntries
        for position in entries.indices {
            var changed = entries
            var slot = entries[position].slot
            slot[31] |= 0x80  // bit 255 set: not canonical
            changed[position] = try SkippedMessageKeyEntry(slot: slot, messageKey: entries[position].messageKey)
            XCTAssertThrowsError(try SessionState(
                serializedWithoutSkippedMessageKeys: bob.serializedWithoutSkippedMessageKeys(), skippedMessageKeys: changed)) { error in
                XCTAssertEqual(error as? SessionError, .invalidPayload, "position \(position)")
            }
        }
    }
}
