import SignalPrimitives
import XCTest

final class HMACSHA256Tests: XCTestCase {
    func testRFC4231Vectors() throws {
        let cases = try RFCVectors.cases("hmac_sha256_rfc4231.json")
        XCTAssertEqual(cases.count, 7)
        for vector in cases {
            let tagBytes = try XCTUnwrap(vector.group["tagSize"] as? Int) / 8
            let key = try vector.hex("key")
            let message = try vector.hex("msg")
            let tag = try vector.hex("tag")
            XCTAssertEqual(tag.count, tagBytes, vector.comment)
            XCTAssertEqual(Array(HMACSHA256.authenticationCode(for: message, using: key).prefix(tagBytes)), tag, vector.comment)
            XCTAssertTrue(HMACSHA256.isValidAuthenticationCode(tag, for: message, using: key, truncatedTo: tagBytes), vector.comment)
        }
    }

    func testIncrementalUpdatesAndBufferFinalizeEqualTheOneShotTag() throws {
        let key = counting(40)
        let message = counting(300, from: 7)
        let expected = HMACSHA256.authenticationCode(for: message, using: key)
        var mac = HMACSHA256(key: key)
        mac.update(Array(message[0..<1]))
        mac.update(Array(message[1..<200]))
        mac.update([])
        mac.update(Array(message[200...]))
        var out = [UInt8](repeating: 0, count: 40)
        try out.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) throws in
            try mac.finalize(into: buffer)
        }
        XCTAssertEqual(Array(out.prefix(32)), expected)
        XCTAssertEqual(Array(out.suffix(8)), [UInt8](repeating: 0, count: 8), "only 32 bytes are written")
    }

    func testACopiedKeyedStateIsReusableForManyMessages() {
        let key = counting(32, from: 3)
        let keyed = HMACSHA256(key: key)
        for message in [counting(0), counting(1), counting(64), counting(65)] {
            var mac = keyed
            mac.update(message)
            XCTAssertEqual(mac.finalize(), HMACSHA256.authenticationCode(for: message, using: key))
        }
        XCTAssertEqual({ var mac = HMACSHA256(key: SymmetricKey(data: key)); mac.update([1]); return mac.finalize() }(),
                       HMACSHA256.authenticationCode(for: [1], using: key))
    }

    func testVerificationRejectsWrongTruncatedAndOversizedTags() {
        let key = counting(32)
        let message = counting(10)
        let tag = HMACSHA256.authenticationCode(for: message, using: key)
        XCTAssertTrue(HMACSHA256.isValidAuthenticationCode(tag, for: message, using: key))
        // A truncated tag verifies only where the caller asks for that truncation.
        XCTAssertFalse(HMACSHA256.isValidAuthenticationCode(Array(tag.prefix(16)), for: message, using: key))
        XCTAssertTrue(HMACSHA256.isValidAuthenticationCode(Array(tag.prefix(16)), for: message, using: key, truncatedTo: 16))
        XCTAssertFalse(HMACSHA256.isValidAuthenticationCode(Array(tag.prefix(16)), for: message, using: key, truncatedTo: 20))
        XCTAssertFalse(HMACSHA256.isValidAuthenticationCode(Array(tag.prefix(16)), for: message, using: key, truncatedTo: 0))
        XCTAssertFalse(HMACSHA256.isValidAuthenticationCode(tag + [0], for: message, using: key, truncatedTo: 33))
        var flipped = tag
        flipped[31] ^= 0x80
        XCTAssertFalse(HMACSHA256.isValidAuthenticationCode(flipped, for: message, using: key))
        XCTAssertFalse(HMACSHA256.isValidAuthenticationCode([], for: message, using: key))
        XCTAssertFalse(HMACSHA256.isValidAuthenticationCode(tag + [0], for: message, using: key))
    }

    func testFinalizeIntoAShortBufferThrows() {
        var mac = HMACSHA256(key: counting(32))
        var short = [UInt8](repeating: 0, count: 31)
        short.withUnsafeMutableBytes { out in
            assertThrows(.bufferTooSmall(required: 32, actual: 31)) { () throws(CryptoError) in try mac.finalize(into: out) }
        }
    }
}
