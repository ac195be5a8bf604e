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

    /// The `content_type` field (SPEC §2) is read: a success test with content type 2 fails
    /// without the field or with 1, and a value other than 1 or 2 is a failure with a message.
    func testTheContentTypeFieldIsRead() throws {
        var checked = 0
        for (_, fields) in try SessionVectorFiles.tests(ofSuite: PaddingSuite.name) where fields["error"] == nil {
            guard let type = fields["content_type"] as? Int else { continue }
            XCTAssertEqual(type, 2)
            var dropped = fields
            dropped.removeValue(forKey: "content_type")
            XCTAssertThrowsError(try PaddingSuite.run(VectorTest(dropped)), "test \(fields["id"] ?? "?"): no content_type")
            var swapped = fields
            swapped["content_type"] = 1
            XCTAssertThrowsError(try PaddingSuite.run(VectorTest(swapped)), "test \(fields["id"] ?? "?"): content_type 1")
            for reserved in [0, 3, 255, 258] {
                var bad = fields
                bad["content_type"] = reserved
                XCTAssertThrowsError(try PaddingSuite.run(VectorTest(bad))) { error in
                    XCTAssertTrue("\(error)".contains("not a content type"), "\(error)")
                }
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 0, "no padding vector with content_type 2")
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
