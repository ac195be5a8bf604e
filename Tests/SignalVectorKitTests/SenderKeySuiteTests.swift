import Foundation
import SignalPrimitives
import SignalVectorKit
import XCTest

/// Runs the `sender-key` suite over TestVectors/protocol/sender_key.json, written by the
/// independent Python reference of SPEC.md.
final class SenderKeySuiteTests: XCTestCase {
    private func loadTests() throws -> [[String: Any]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../TestVectors/protocol/sender_key.json").standardizedFileURL
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("no vector file at \(url.path)")
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        let file = try XCTUnwrap(object as? [String: Any])
        XCTAssertEqual(file["schema"] as? String, "sessionkit-vectors/1")
        XCTAssertEqual(file["suite"] as? String, SenderKeySuite.name)
        return try XCTUnwrap(file["tests"] as? [[String: Any]])
    }

    func testEveryReferenceVectorPasses() throws {
        let tests = try loadTests()
        XCTAssertFalse(tests.isEmpty)
        var passed = 0
        for fields in tests {
            let test = VectorTest(fields)
            do {
                let outcome = try SenderKeySuite.run(test)
                XCTAssertEqual(outcome, .passed)
                if outcome == .passed { passed += 1 }
            } catch {
                XCTFail("test \(test.id) (\(fields["comment"] ?? "")): \(error)")
            }
        }
        XCTAssertEqual(passed, tests.count)
        print("sender-key: \(passed) of \(tests.count) reference vectors passed")
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
}
