import SignalPrimitives
import XCTest

final class SymmetricKeyTests: XCTestCase {
    func testEqualityIsByContents() {
        XCTAssertEqual(SymmetricKey(data: counting(32)), SymmetricKey(data: counting(32)))
        XCTAssertNotEqual(SymmetricKey(data: counting(32)), SymmetricKey(data: counting(32, from: 1)))
        XCTAssertNotEqual(SymmetricKey(data: counting(32)), SymmetricKey(data: counting(16)))
    }

    func testRandomKeysHaveTheRequestedLengthAndDiffer() {
        let a = SymmetricKey(byteCount: 32)
        let b = SymmetricKey(byteCount: 32)
        XCTAssertEqual(a.byteCount, 32)
        XCTAssertNotEqual(a, b)
    }

    func testDescriptionsAreRedacted() {
        let secret = counting(32, from: 0x30)
        let key = SymmetricKey(data: secret)
        for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key)] {
            XCTAssertFalse(text.contains(Hex.encode(secret)), text)
            XCTAssertTrue(text.contains("redacted"), text)
        }
    }
}
