import SignalPrimitives
import XCTest

final class SecureBytesTests: XCTestCase {
    func testConstantTimeEqualityComparesContentsAndLength() {
        let a = SecureBytes(copying: counting(32))
        XCTAssertTrue(a.constantTimeEquals(SecureBytes(copying: counting(32))))
        XCTAssertTrue(a.constantTimeEquals(a))
        var lastDiffers = counting(32)
        lastDiffers[31] ^= 1
        XCTAssertFalse(a.constantTimeEquals(SecureBytes(copying: lastDiffers)))
        var firstDiffers = counting(32)
        firstDiffers[0] ^= 0x80
        XCTAssertFalse(a.constantTimeEquals(SecureBytes(copying: firstDiffers)))
        XCTAssertFalse(a.constantTimeEquals(SecureBytes(copying: counting(31))))
        XCTAssertTrue(SecureBytes(copying: []).constantTimeEquals(SecureBytes(copying: [])))
    }

    func testConstantTimeEqualsOnArrays() {
        XCTAssertTrue(ConstantTime.equals(counting(16), counting(16)))
        XCTAssertFalse(ConstantTime.equals(counting(16), counting(16, from: 1)))
        XCTAssertFalse(ConstantTime.equals(counting(16), counting(17)))
        XCTAssertTrue(ConstantTime.equals([], []))
    }

    func testContentsAndCountAreKeptAndTheInitializerFillsThemOnce() {
        let storage = SecureBytes(count: 8) { buffer in
            for index in buffer.indices { buffer[index] = UInt8(index * 3) }
        }
        XCTAssertEqual(storage.count, 8)
        XCTAssertEqual(storage.bytes, [0, 3, 6, 9, 12, 15, 18, 21])
        XCTAssertEqual(SecureBytes(count: -5) { _ in }.count, 0)
    }

    func testDescriptionsAreRedacted() {
        let secret = counting(32, from: 0xa0)
        let storage = SecureBytes(copying: secret)
        for text in [storage.description, storage.debugDescription, "\(storage)", String(reflecting: storage)] {
            XCTAssertFalse(text.contains(Hex.encode(secret)), text)
            XCTAssertFalse(text.contains("a0a1a2"), text)
            XCTAssertTrue(text.contains("redacted"), text)
        }
    }

    func testZeroingHelpersWipeBuffers() {
        var array = counting(20, from: 1)
        SecureMemory.zero(&array)
        XCTAssertEqual(array, [UInt8](repeating: 0, count: 20))
        var other = counting(8, from: 1)
        other.withUnsafeMutableBytes { SecureMemory.zero($0) }
        XCTAssertEqual(other, [UInt8](repeating: 0, count: 8))
    }
}
