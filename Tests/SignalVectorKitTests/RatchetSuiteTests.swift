import Foundation
import SignalVectorKit
import XCTest

/// Runs the `ratchet` suite on TestVectors/protocol/ratchet.json and checks that corrupted
/// copies of its tests fail.
final class RatchetSuiteTests: XCTestCase {
    func testEveryRatchetVectorPasses() throws {
        let passed = try SessionVectorFiles.runAll(RatchetSuite.self)
        print("ratchet: \(passed) vectors passed")
    }

    func testTheSuiteIsRegistered() {
        XCTAssertTrue(SuiteRegistry.suites[RatchetSuite.name] == RatchetSuite.self)
    }

    /// For each test: a changed expected message, a changed expected plaintext, a changed
    /// error name and one fewer ratchet key must each make the test fail.
    func testCorruptedRatchetVectorsFail() throws {
        for (_, fields) in try SessionVectorFiles.tests(ofSuite: RatchetSuite.name) {
            let id = fields["id"] ?? "?"
            guard let events = fields["events"] as? [[String: Any]] else {
                XCTFail("test \(id) has no events")
                continue
            }
            if let send = events.firstIndex(where: { $0["op"] as? String == "send" && $0["message"] != nil }) {
                var changed = events
                changed[send]["message"] = SessionVectorFiles.flipLastDigit(events[send]["message"] as? String ?? "")
                var corrupted = fields
                corrupted["events"] = changed
                XCTAssertThrowsError(try RatchetSuite.run(VectorTest(corrupted)), "test \(id): changed message")
            }
            if let recv = events.lastIndex(where: { $0["op"] as? String == "recv" && $0["plaintext"] != nil }) {
                var changed = events
                changed[recv]["plaintext"] = (events[recv]["plaintext"] as? String ?? "") + "00"
                var corrupted = fields
                corrupted["events"] = changed
                XCTAssertThrowsError(try RatchetSuite.run(VectorTest(corrupted)), "test \(id): changed plaintext")
            }
            if let failing = events.firstIndex(where: { ($0["error"] as? String).map { $0 != "any" } ?? false }) {
                var changed = events
                changed[failing]["error"] = events[failing]["error"] as? String == "invalidMessage" ? "invalidKey" : "invalidMessage"
                var corrupted = fields
                corrupted["events"] = changed
                XCTAssertThrowsError(try RatchetSuite.run(VectorTest(corrupted)), "test \(id): changed error name")
            }
        }
    }

    /// The events' `content_type` (SPEC §2) is read: a test that uses it fails once every
    /// event's `content_type` is dropped (its type-2 sends no longer give their `message`).
    func testDroppingTheContentTypesOfATestMakesItFail() throws {
        var checked = 0
        for (_, fields) in try SessionVectorFiles.tests(ofSuite: RatchetSuite.name) {
            guard let events = fields["events"] as? [[String: Any]], events.contains(where: { $0["content_type"] != nil }) else { continue }
            var corrupted = fields
            corrupted["events"] = events.map { event in
                var event = event
                event.removeValue(forKey: "content_type")
                return event
            }
            XCTAssertThrowsError(try RatchetSuite.run(VectorTest(corrupted)), "test \(fields["id"] ?? "?")")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 0, "no ratchet vector with content_type")
    }

    /// A scenario whose parties draw keys needs every listed key: dropping Bob's last one
    /// must make the runner fail (it never invents keys).
    func testMissingRatchetKeysFail() throws {
        for (_, fields) in try SessionVectorFiles.tests(ofSuite: RatchetSuite.name).prefix(10) {
            guard var bob = fields["bob"] as? [String: Any], let keys = bob["ratchet_keys"] as? [String], !keys.isEmpty else { continue }
            bob["ratchet_keys"] = Array(keys.dropLast())
            var corrupted = fields
            corrupted["bob"] = bob
            XCTAssertThrowsError(try RatchetSuite.run(VectorTest(corrupted)), "test \(fields["id"] ?? "?")")
        }
    }

    /// Limits that would let one message make the runner derive or keep more than 100 000
    /// keys are a failure of that test with a message, decided before any session exists.
    func testLimitsAboveTheRunnersCapOrMaxSkipAboveMaxStoredFailWithAMessage() throws {
        let fields = try XCTUnwrap(try SessionVectorFiles.tests(ofSuite: RatchetSuite.name).first?.fields)
        XCTAssertEqual(try RatchetSuite.run(VectorTest(fields)), .passed)
        let cases: [(maxSkip: Int, maxStored: Int, message: String)] = [
            (256, RatchetSuite.maximumStored + 1, "max_stored \(RatchetSuite.maximumStored + 1) is above the runner's limit"),
            (4_000_000_000, 4_000_000_000, "max_stored 4000000000 is above the runner's limit"),
            (Int.max, Int.max, "max_stored \(Int.max) is above the runner's limit"),
            (2001, 2000, "max_skip 2001 is not in 0 … max_stored (2000)"),
            (-1, 2000, "max_skip -1 is not in 0 … max_stored (2000)"),
        ]
        for (maxSkip, maxStored, message) in cases {
            var hostile = fields
            hostile["max_skip"] = maxSkip
            hostile["max_stored"] = maxStored
            XCTAssertThrowsError(try RatchetSuite.run(VectorTest(hostile))) { error in
                XCTAssertTrue(error is VectorFailure, "\(error)")
                XCTAssertTrue("\(error)".contains(message), "\(error)")
            }
        }
    }
}
