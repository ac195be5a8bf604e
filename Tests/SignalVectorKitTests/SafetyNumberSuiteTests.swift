import Foundation
import SignalVectorKit
import XCTest

/// Runs the `safety-number` suite on TestVectors/protocol/safety_number.json (written by the
/// independent Python generator) and checks that corrupted copies of its tests fail.
final class SafetyNumberSuiteTests: XCTestCase {
    private func loadTests() throws -> [[String: Any]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let url = root.appendingPathComponent("TestVectors/protocol/safety_number.json")
        guard FileManager.default.fileExists(atPath: url.path) else {
            XCTFail("missing vector file \(url.path)")
            return []
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        guard let file = object as? [String: Any], file["suite"] as? String == SafetyNumberSuite.name,
              let tests = file["tests"] as? [[String: Any]] else {
            XCTFail("safety_number.json is not a safety-number protocol file")
            return []
        }
        return tests
    }

    func testEveryVectorPasses() throws {
        let tests = try loadTests()
        XCTAssertGreaterThan(tests.count, 0)
        var passed = 0
        for fields in tests {
            let test = VectorTest(fields)
            do {
                let outcome = try SafetyNumberSuite.run(test)
                XCTAssertEqual(outcome, .passed, "test \(test.id)")
                passed += 1
            } catch {
                XCTFail("test \(test.id): \(error)")
            }
        }
        XCTAssertEqual(passed, tests.count)
    }

    func testTheSuiteIsRegistered() {
        XCTAssertTrue(SuiteRegistry.suites[SafetyNumberSuite.name] == SafetyNumberSuite.self)
    }

    func testCorruptedDisplayableOrScannableFails() throws {
        for fields in try loadTests().prefix(8) {
            var digits = Array((fields["displayable"] as? String ?? "").utf8)
            digits[17] = digits[17] == UInt8(ascii: "9") ? UInt8(ascii: "0") : digits[17] + 1
            var wrongDigits = fields
            wrongDigits["displayable"] = String(decoding: digits, as: UTF8.self)
            XCTAssertThrowsError(try SafetyNumberSuite.run(VectorTest(wrongDigits)))

            var scannable = Array((fields["scannable"] as? String ?? "").utf8)
            scannable[scannable.count - 1] = scannable.last == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            var wrongScannable = fields
            wrongScannable["scannable"] = String(decoding: scannable, as: UTF8.self)
            XCTAssertThrowsError(try SafetyNumberSuite.run(VectorTest(wrongScannable)))

            var otherIteration = fields
            otherIteration["iterations"] = ((fields["iterations"] as? Int) ?? 5200) + 1
            XCTAssertThrowsError(try SafetyNumberSuite.run(VectorTest(otherIteration)))
        }
    }
}
