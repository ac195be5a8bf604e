@testable import SignalVectorKit
import SignalPrimitives
import XCTest

/// The generators' hex literals go through `Hex.decode`: a short, odd or non-hex literal is a
/// generation error, never a trap.
final class CurveEncodingsTests: XCTestCase {
    func testA32ByteLiteralDecodesToItsBytes() throws {
        let text = "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"
        XCTAssertEqual(try CurveEncodings.hex(text), Hex.decode(text))
        XCTAssertEqual(try CurveEncodings.smallOrderPoints().map(\.encoding.count), Array(repeating: 32, count: 8))
    }

    func testShortOddLongOrNonHexLiteralsThrowInsteadOfTrapping() {
        for text in ["", "26e8", String(repeating: "ab", count: 31), String(repeating: "ab", count: 33),
                     String(repeating: "a", count: 63), String(repeating: "zz", count: 32)] {
            XCTAssertThrowsError(try CurveEncodings.hex(text), "\(text.count) characters") { error in
                guard case VectorGenerationError.selfCheckFailed = error else {
                    return XCTFail("\(error)")
                }
            }
        }
    }
}
