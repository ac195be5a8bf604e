import SignalPrimitives
import XCTest

final class HexTests: XCTestCase {
    func testEncodesLowercaseAndDecodesEitherCase() {
        XCTAssertEqual(Hex.encode([0x00, 0x0f, 0xa5, 0xff]), "000fa5ff")
        XCTAssertEqual(Hex.decode("000FA5ff"), [0x00, 0x0f, 0xa5, 0xff])
        XCTAssertEqual(Hex.decode(""), [])
    }

    func testRejectsOddLengthAndNonHexCharacters() {
        for bad in ["0", "abc", "zz", "0x00", " 00", "00 ", "é0"] {
            XCTAssertNil(Hex.decode(bad), bad)
        }
    }
}
