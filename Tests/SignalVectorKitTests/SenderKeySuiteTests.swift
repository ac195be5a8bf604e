import Foundation
import SignalPrimitives
import SignalVectorKit
import XCTest

/// Runs the `sender-key` suite over TestVectors/protocol/sender_key.json, written by the
/// independent Python reference of SPEC.md.
final class SenderKeySuiteTests: XCTestCase {
    /// Every `SenderKey` test of the files in TestVectors/protocol (a missing
    /// folder or an empty result fails the test instead of passing it vacuously).
    private func loadTests() throws -> [[String: Any]] {
        let tests = try SessionVectorFiles.tests(ofSuite: SenderKeySuite.name).map(\.fields)
        XCTAssertFalse(tests.isEmpty, "no \(SenderKeySuite.name) vectors in TestVectors/protocol")
        return tests
    }

    func testEveryReferenceVectorPasses() throws {
        let passed = try SessionVectorFiles.runAll(SenderKeySuite.self)
        XCTAssertGreaterThan(passed, 0)
    }

    func testCorruptedDistributionFails() throws {
        for fields in try loadTests() {
            var corrupted = fields
            var distribution = try XCTUnwrap(Hex.decode(try XCTUnwrap(fields["distribution"] as? String)))
            distribution[40] ^= 0x01
            corrupted["distribution"] = Hex.encode(distribution)
            XCTAssertThrowsError(try SenderKeySuite.run(VectorTest(corrupted)), "test \(fields["id"] ?? -1)")
        }
    }

    func testCorruptedSentMessageFails() throws {
        var checked = 0
        for fields in try loadTests() {
            guard var events = fields["events"] as? [[String: Any]],
                  let index = events.firstIndex(where: { $0["op"] as? String == "send" && $0["error"] == nil }),
                  let text = events[index]["message"] as? String, var message = Hex.decode(text) else { continue }
            message[message.count - 1] ^= 0x01
            events[index]["message"] = Hex.encode(message)
            var corrupted = fields
            corrupted["events"] = events
            XCTAssertThrowsError(try SenderKeySuite.run(VectorTest(corrupted)), "test \(fields["id"] ?? -1)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 0)
    }

    func testWrongExpectedPlaintextOrErrorFails() throws {
        var checked = 0
        for fields in try loadTests() {
            guard var events = fields["events"] as? [[String: Any]],
                  let index = events.firstIndex(where: { $0["op"] as? String == "recv" }) else { continue }
            if let error = events[index]["error"] as? String {
                guard error != "any" else { continue }
                events[index]["error"] = error == "duplicateMessage" ? "invalidMessage" : "duplicateMessage"
            } else {
                let plaintext = (events[index]["plaintext"] as? String).flatMap(Hex.decode) ?? []
                events[index]["plaintext"] = Hex.encode(plaintext + [0x00])
            }
            var wrong = fields
            wrong["events"] = events
            XCTAssertThrowsError(try SenderKeySuite.run(VectorTest(wrong)), "test \(fields["id"] ?? -1)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 0)
    }

    /// An `iteration` the runner would need more than 2^20 HMAC steps to reach is a failure of
    /// that test with a message, decided before any step (2^32 − 1 would otherwise take hours).
    func testIterationAboveTheRunnersLimitFailsWithAMessageInsteadOfRunning() throws {
        let fields = try XCTUnwrap(try loadTests().first)
        for iteration in [Int(SenderKeySuite.maximumIteration) + 1, Int(UInt32.max)] {
            var hostile = fields
            hostile["iteration"] = iteration
            XCTAssertThrowsError(try SenderKeySuite.run(VectorTest(hostile))) { error in
                XCTAssertTrue(error is VectorFailure, "\(error)")
                XCTAssertTrue("\(error)".contains("iteration \(iteration) is above the runner's limit"), "\(error)")
            }
        }
    }
}
