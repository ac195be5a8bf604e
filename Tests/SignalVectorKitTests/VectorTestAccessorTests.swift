import Foundation
import SignalVectorKit
import XCTest

/// The typed accessors of `VectorTest`: a field out of its range is a `VectorFailure` of that
/// test, never a crash or a silently wrapped value.
final class VectorTestAccessorTests: XCTestCase {
    /// A test object as `JSONSerialization` gives it for `json`.
    private func test(_ json: String) throws -> VectorTest {
        VectorTest(try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]))
    }

    func testUInt32AcceptsTheWholeRangeOfAU32() throws {
        XCTAssertEqual(try test(#"{"n": 0}"#).uint32("n"), 0)
        XCTAssertEqual(try test(#"{"n": 4294967295}"#).uint32("n"), UInt32.max)
    }

    func testUInt32RejectsNegativeTooLargeNonIntegerAndMissingValues() throws {
        for json in [#"{"n": -1}"#, #"{"n": 4294967296}"#, #"{"n": 9223372036854775807}"#,
                     #"{"n": 1.5}"#, #"{"n": true}"#, #"{"n": "7"}"#, #"{"m": 7}"#] {
            XCTAssertThrowsError(try test(json).uint32("n"), json) { error in
                XCTAssertTrue(error is VectorFailure, "\(json): \(error)")
                XCTAssertTrue("\(error)".contains("'n'"), "\(json): \(error)")
            }
        }
    }
}
