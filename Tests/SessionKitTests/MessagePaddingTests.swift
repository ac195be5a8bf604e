import XCTest
@_spi(Testing) @testable import SessionKit

final class MessagePaddingTests: XCTestCase {
    func testBucketsFollowSpecSection2() {
        XCTAssertEqual(MessagePadding.paddedLength(forPlaintextCount: 0), 64)
        XCTAssertEqual(MessagePadding.paddedLength(forPlaintextCount: 59), 64)
        XCTAssertEqual(MessagePadding.paddedLength(forPlaintextCount: 60), 128)
        XCTAssertEqual(MessagePadding.paddedLength(forPlaintextCount: 65531), 65536)
        XCTAssertEqual(MessagePadding.paddedLength(forPlaintextCount: 65532), 131072)
        XCTAssertEqual(MessagePadding.paddedLength(forPlaintextCount: 70000), 131072)
    }

    func testUnpadRejectsMalformedInput() {
        for bad: [UInt8] in [[], [1, 0, 0, 0], [0, 0, 0, 0, 0], [2, 0, 0, 0, 0], [1, 0, 0, 0, 1], [1, 0xff, 0xff, 0xff, 0xff]] {
            XCTAssertThrowsError(try MessagePadding.unpad(bad)) { XCTAssertEqual($0 as? SessionError, .invalidPadding) }
        }
    }

    func testRoundTrip() throws {
        for n in [0, 1, 59, 60, 1000, 70000] {
            let plaintext = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            XCTAssertEqual(try MessagePadding.unpad(MessagePadding.pad(plaintext)), plaintext)
        }
    }
}
