import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// The journal of `SkippedMessageKeys` (what changed since a store marked the keys persisted),
/// which `SQLiteProtocolStore` writes from instead of comparing every key: applied to the set
/// marked, it must give exactly the set held, whatever happened in between.
final class SkippedKeyJournalTests: XCTestCase {
    private func slot(_ ratchetKey: X25519.PublicKey, _ counter: UInt32) -> SkippedMessageKeys.Slot {
        SkippedMessageKeys.Slot(ratchetKey: ratchetKey, counter: counter)
    }

    private func key(_ byte: UInt8) -> MessageKey { MessageKey(storage: SecureBytes(copying: [UInt8](repeating: byte, count: 32))) }

    private func ratchetKey() throws -> X25519.PublicKey { try X25519.PrivateKey().publicKey }

    func testUnmarkedOrOtherTokenHasNoChanges() throws {
        var keys = SkippedMessageKeys()
        let dh = try ratchetKey()
        keys.append([(slot(dh, 0), key(1))], maxStored: 10)
        XCTAssertNil(keys.changes(since: 7), "a value never marked follows nothing")
        keys.markPersisted(token: 7)
        XCTAssertNil(keys.changes(since: 8), "another token is another basis")
        let changes = try XCTUnwrap(keys.changes(since: 7))
        XCTAssertTrue(changes.removed.isEmpty)
        XCTAssertTrue(changes.added.isEmpty)
    }

    func testRemovedAddedReplacedAndEvictedKeysAreReported() throws {
        var keys = SkippedMessageKeys()
        let (a, b) = (try ratchetKey(), try ratchetKey())
        keys.append((0 ..< 4).map { (slot(a, $0), key(UInt8($0))) }, maxStored: 5)
        keys.markPersisted(token: 1)
        keys.remove(slot(a, 2))                                   // used
        keys.append([(slot(b, 0), key(10)), (slot(a, 1), key(11))], maxStored: 5)   // one new, one replaced
        keys.append([(slot(b, 1), key(12)), (slot(b, 2), key(13))], maxStored: 5)   // evicts a/0 (the oldest)
        let changes = try XCTUnwrap(keys.changes(since: 1))
        XCTAssertEqual(changes.removed, [slot(a, 2), slot(a, 1), slot(a, 0)])
        XCTAssertEqual(changes.added.map(\.slot), [slot(b, 0), slot(a, 1), slot(b, 1), slot(b, 2)])
        XCTAssertEqual(keys.inAgeOrder.map(\.slot), [slot(a, 3), slot(b, 0), slot(a, 1), slot(b, 1), slot(b, 2)])
    }

    func testTooManyRemovalsDropTheJournal() throws {
        var keys = SkippedMessageKeys()
        let dh = try ratchetKey()
        let count = SkippedMessageKeys.journalLimit + 1
        keys.append((0 ..< UInt32(count)).map { (slot(dh, $0), key(1)) }, maxStored: count)
        keys.markPersisted(token: 3)
        for counter in 0 ..< UInt32(count - 1) { keys.remove(slot(dh, counter)) }
        XCTAssertNotNil(keys.changes(since: 3), "up to the limit the journal is followed")
        keys.remove(slot(dh, UInt32(count - 1)))
        XCTAssertNil(keys.changes(since: 3), "beyond the limit the store compares in full")
    }

    /// Random operations between marks: the marked set with the removals taken out and the
    /// additions put in (in the order a store applies them: delete, then insert) is the set held.
    func testApplyingTheJournalToTheMarkedSetGivesTheSetHeld() throws {
        var random = SplitMix64(seed: 0x5EED)
        let ratchetKeys = try (0 ..< 3).map { _ in try ratchetKey() }
        var keys = SkippedMessageKeys()
        var persisted: Set<SkippedMessageKeys.Slot> = []
        for round in 0 ..< 200 {
            keys.markPersisted(token: UInt64(round + 1))
            for _ in 0 ..< Int(random.next() % 6) {
                let target = slot(ratchetKeys[Int(random.next() % 3)], UInt32(random.next() % 40))
                if random.next() % 2 == 0 {
                    keys.remove(target)
                } else {
                    keys.append([(target, key(UInt8(truncatingIfNeeded: round)))], maxStored: 25)
                }
            }
            let changes = try XCTUnwrap(keys.changes(since: UInt64(round + 1)))
            for removed in changes.removed { persisted.remove(removed) }
            for added in changes.added {
                XCTAssertFalse(persisted.contains(added.slot), "round \(round): an added slot is deleted first")
                persisted.insert(added.slot)
            }
            XCTAssertEqual(persisted, Set(keys.inAgeOrder.map(\.slot)), "round \(round)")
        }
    }
}
