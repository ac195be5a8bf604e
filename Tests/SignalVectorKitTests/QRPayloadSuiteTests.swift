import Foundation
import SignalVectorKit
import XCTest

/// Runs the `qr-payload` suite on TestVectors/protocol/qr_payload.json (written by the
/// independent Python generator) and checks that corrupted copies of its tests fail.
final class QRPayloadSuiteTests: XCTestCase {
    /// Every `QRPayload` test of the files in TestVectors/protocol (a missing
    /// folder or an empty result fails the test instead of passing it vacuously).
    private func loadTests() throws -> [[String: Any]] {
        let tests = try SessionVectorFiles.tests(ofSuite: QRPayloadSuite.name).map(\.fields)
        XCTAssertFalse(tests.isEmpty, "no \(QRPayloadSuite.name) vectors in TestVectors/protocol")
        return tests
    }

    func testEveryVectorPasses() throws {
        XCTAssertTrue(try loadTests().contains { $0["error"] != nil }, "the file has error tests")
        let passed = try SessionVectorFiles.runAll(QRPayloadSuite.self)
        XCTAssertGreaterThan(passed, 0)
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
