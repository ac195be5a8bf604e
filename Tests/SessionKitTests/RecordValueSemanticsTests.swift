import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @_spi(Storage) @testable import SessionKit

/// `SessionRecord` and `SessionState` keep value semantics although their parts live in shared
/// objects (a record's sessions in one copy-on-write object, a session's fixed parts in one
/// immutable object): a change to one copy never shows in another.
final class RecordValueSemanticsTests: XCTestCase {
    /// A copy that encrypts leaves the original where it was: the original then produces the
    /// message the copy produced first (same chain position, same bytes), and the serialized
    /// original is unchanged.
    func testEncryptingWithACopyLeavesTheOriginalUnchanged() throws {
        var conversation = try Conversation()
        _ = try conversation.bobReceives(try conversation.aliceSends(plaintext(0)))
        _ = try conversation.aliceReceives(try conversation.bobSends(plaintext(1)))
        let original = conversation.aliceRecord
        let before = original.serialized()

        var copy = original
        let first = try copy.encrypt(plaintext(2))
        let second = try copy.encrypt(plaintext(2))
        XCTAssertNotEqual(first, second, "the copy's chain advanced")
        XCTAssertEqual(original.serialized(), before, "the original did not change")
        XCTAssertNotEqual(copy.serialized(), before)

        var again = original
        XCTAssertEqual(try again.encrypt(plaintext(2)), first, "the original is still at the copy's first position")
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(2))
    }

    /// Archiving the current session, changing the recovery marks or the generation of a copy
    /// touches the copy only.
    func testChangingACopysSessionsAndMarksLeavesTheOriginalUnchanged() throws {
        var conversation = try Conversation()
        _ = try conversation.bobReceives(try conversation.aliceSends(plaintext(0)))
        let original = conversation.bobRecord
        let before = original.serialized()
        XCTAssertNotNil(original.currentSession)

        var copy = original
        copy.archiveCurrentSession()
        copy.recoveryMarks.noticeSentAt = Timestamp(secondsSince1970: 1_000)
        copy.generation = 9
        XCTAssertNil(copy.currentSession)
        XCTAssertEqual(copy.previousSessions.count, 1)
        XCTAssertNotNil(original.currentSession, "the original keeps its current session")
        XCTAssertTrue(original.previousSessions.isEmpty)
        XCTAssertNil(original.recoveryMarks.noticeSentAt)
        XCTAssertEqual(original.generation, 0)
        XCTAssertEqual(original.serialized(), before)
    }

    /// Two copies of one record advanced on two threads at once (as a batch of records is on
    /// several cores) each advance on their own, and the record they came from does not.
    func testCopiesAdvancedConcurrentlyStayIndependent() throws {
        var conversation = try Conversation()
        _ = try conversation.bobReceives(try conversation.aliceSends(plaintext(0)))
        _ = try conversation.aliceReceives(try conversation.bobSends(plaintext(1)))
        let original = conversation.aliceRecord
        let before = original.serialized()
        let results = LockedResults()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            var copy = original
            var messages: [[UInt8]] = []
            for _ in 0 ..< 50 { messages.append((try? copy.encrypt(plaintext(3))) ?? []) }
            results.set(index, messages)
        }
        let (a, b) = (results.get(0), results.get(1))
        XCTAssertEqual(a.count, 50)
        XCTAssertEqual(a, b, "both copies started at the same position and advanced alike")
        XCTAssertFalse(a.contains([]))
        XCTAssertEqual(original.serialized(), before)
        for message in a { XCTAssertEqual(try conversation.bobReceives(message), plaintext(3)) }
    }
}

/// Results written by concurrent closures.
private final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int: [[UInt8]]] = [:]

    func set(_ index: Int, _ value: [[UInt8]]) { lock.withLock { values[index] = value } }
    func get(_ index: Int) -> [[UInt8]] { lock.withLock { values[index] ?? [] } }
}
