import Foundation
import SignalVectorKit
import XCTest

/// Runs the `safety-number` suite on TestVectors/protocol/safety_number.json (written by the
/// independent Python generator) and checks that corrupted copies of its tests fail.
final class SafetyNumberSuiteTests: XCTestCase {
    /// Every `SafetyNumber` test of the files in TestVectors/protocol (a missing
    /// folder or an empty result fails the test instead of passing it vacuously).
    private func loadTests() throws -> [[String: Any]] {
        let tests = try SessionVectorFiles.tests(ofSuite: SafetyNumberSuite.name).map(\.fields)
        XCTAssertFalse(tests.isEmpty, "no \(SafetyNumberSuite.name) vectors in TestVectors/protocol")
        return tests
    }

    func testEveryVectorPasses() throws {
        let passed = try SessionVectorFiles.runAll(SafetyNumberSuite.self)
        XCTAssertGreaterThan(passed, 0)
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
