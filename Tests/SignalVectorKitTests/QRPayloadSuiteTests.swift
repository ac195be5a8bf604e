import Foundation
import SignalVectorKit
import XCTest

/// Runs the `qr-payload` suite on TestVectors/protocol/qr_payload.json (written by the
/// independent Python generator) and checks that corrupted copies of its tests fail.
final class QRPayloadSuiteTests: XCTestCase {
    private func loadTests() throws -> [[String: Any]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let url = root.appendingPathComponent("TestVectors/protocol/qr_payload.json")
        guard FileManager.default.fileExists(atPath: url.path) else {
            XCTFail("missing vector file \(url.path)")
            return []
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        guard let file = object as? [String: Any], file["suite"] as? String == QRPayloadSuite.name,
              let tests = file["tests"] as? [[String: Any]] else {
            XCTFail("qr_payload.json is not a qr-payload protocol file")
            return []
        }
        return tests
    }

    func testEveryVectorPasses() throws {
        let tests = try loadTests()
        XCTAssertGreaterThan(tests.count, 0)
        XCTAssertTrue(tests.contains { $0["error"] != nil }, "the file has error tests")
        var passed = 0
        for fields in tests {
            let test = VectorTest(fields)
            do {
                let outcome = try QRPayloadSuite.run(test)
                XCTAssertEqual(outcome, .passed, "test \(test.id)")
                passed += 1
            } catch {
                XCTFail("test \(test.id): \(error)")
            }
        }
        XCTAssertEqual(passed, tests.count)
    }

    func testTheSuiteIsRegistered() {
        XCTAssertTrue(SuiteRegistry.suites[QRPayloadSuite.name] == QRPayloadSuite.self)
    }

    func testCorruptedPayloadsOrWrongErrorNamesFail() throws {
        for fields in try loadTests() {
            if let error = fields["error"] as? String {
                var wrongName = fields
                wrongName["error"] = error == "invalidPayload" ? "unsupportedVersion" : "invalidPayload"
                XCTAssertThrowsError(try QRPayloadSuite.run(VectorTest(wrongName)), "test \(fields["id"] ?? "?")")
            } else {
                var payload = Array((fields["payload"] as? String ?? "").utf8)
                payload[payload.count - 1] = payload.last == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
                var wrongKey = fields
                wrongKey["payload"] = String(decoding: payload, as: UTF8.self)
                XCTAssertThrowsError(try QRPayloadSuite.run(VectorTest(wrongKey)), "test \(fields["id"] ?? "?")")
            }
        }
    }
}
