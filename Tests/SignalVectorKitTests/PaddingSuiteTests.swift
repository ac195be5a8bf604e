import Foundation
import SignalVectorKit
import XCTest

/// Runs the `padding` suite on every TestVectors/protocol/padding*.json file and checks that
/// corrupted copies of its tests fail.
final class PaddingSuiteTests: XCTestCase {
    func testEveryPaddingVectorPasses() throws {
        let passed = try SessionVectorFiles.runAll(PaddingSuite.self)
        print("padding: \(passed) vectors passed")
    }

    func testTheSuiteIsRegistered() {
        XCTAssertTrue(SuiteRegistry.suites[PaddingSuite.name] == PaddingSuite.self)
    }

    func testCorruptedPaddingVectorsFail() throws {
        for (_, fields) in try SessionVectorFiles.tests(ofSuite: PaddingSuite.name) {
            var corrupted = fields
            if fields["error"] != nil {
                corrupted.removeValue(forKey: "error")
                corrupted["plaintext"] = ""
            } else if let padded = fields["padded"] as? String, padded.count <= 8192 {
                // The fill length field: one more zero byte claimed than there is room for, or one fewer.
                corrupted["padded"] = SessionVectorFiles.flipLastDigit(padded)
            } else {
                continue
            }
            XCTAssertThrowsError(try PaddingSuite.run(VectorTest(corrupted)), "test \(fields["id"] ?? "?")")
        }
    }
}
