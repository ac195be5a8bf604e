@_spi(Testing) import SessionKit
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// The QR payload codec v1 (SPEC §7): `0x01 || u8(len) || uid || key(32)`, decoded strictly.
final class QRPayloadTests: XCTestCase {
    private let keyBytes = [UInt8](0 ..< 32)
    private var key: Ed25519.PublicKey { (try? Ed25519.PublicKey(rawRepresentation: keyBytes)) ?? identityKey(0) }

    private func assertDecoding(_ bytes: [UInt8], fails expected: VerificationError,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try QRPayload(decoding: bytes), file: file, line: line) {
            XCTAssertEqual($0 as? VerificationError, expected, file: file, line: line)
        }
    }

    private func payload(uid: [UInt8], key: [UInt8]) -> [UInt8] { [0x01, UInt8(uid.count)] + uid + key }

    func testLayoutIsVersionLengthUidKey() throws {
        let encoded = try QRPayload(uid: "alice", identityKey: key).encoded
        XCTAssertEqual(encoded, [0x01, 0x05, 0x61, 0x6c, 0x69, 0x63, 0x65] + keyBytes)
    }

    func testRoundTripsForShortLongAndNonASCIIUids() throws {
        for uid in ["a", "alice", "zoë 😀", String(repeating: "x", count: 255), String(repeating: "€", count: 85), " "] {
            let identityKey = try Ed25519.PrivateKey().publicKey
            let original = try QRPayload(uid: uid, identityKey: identityKey)
            let decoded = try QRPayload(decoding: original.encoded)
            XCTAssertEqual(decoded, original)
            XCTAssertEqual(decoded.uidBytes, Array(uid.utf8))
            XCTAssertEqual(decoded.identityKey, identityKey)
            XCTAssertEqual(decoded.encoded, original.encoded)
            XCTAssertTrue(decoded.matches(uid: uid, identityKey: identityKey))
        }
    }

    func testPrecomposedAndDecomposedUidsAreDifferentUids() throws {
        let precomposed = try QRPayload(uid: "\u{e9}", identityKey: key)
        let decomposed = try QRPayload(uid: "e\u{301}", identityKey: key)
        XCTAssertEqual("\u{e9}", "e\u{301}", "Swift strings equate them, which is why uids are bytes")
        XCTAssertEqual(precomposed.uidBytes, [0xc3, 0xa9])
        XCTAssertEqual(decomposed.uidBytes, [0x65, 0xcc, 0x81])
        XCTAssertNotEqual(precomposed, decomposed)
        XCTAssertNotEqual(precomposed.encoded, decomposed.encoded)
        XCTAssertFalse(precomposed.matches(uid: "e\u{301}", identityKey: key))
        XCTAssertTrue(precomposed.matches(uid: "\u{e9}", identityKey: key))
        XCTAssertEqual(try QRPayload(decoding: decomposed.encoded).uidBytes, [0x65, 0xcc, 0x81])
    }

    func testAnotherKeyDoesNotMatch() throws {
        let payload = try QRPayload(uid: "alice", identityKey: key)
        XCTAssertFalse(payload.matches(uid: "alice", identityKey: try Ed25519.PublicKey(rawRepresentation: keyBytes.reversed())))
    }

    func testUnknownVersionsAreUnsupported() {
        let good = payload(uid: Array("alice".utf8), key: keyBytes)
        for version: UInt8 in [0x00, 0x02, 0x7f, 0xff] {
            assertDecoding([version] + good.dropFirst(), fails: .unsupportedVersion)
        }
    }

    func testShortBuffersAndEmptyUidsAreInvalid() {
        let good = payload(uid: Array("alice".utf8), key: keyBytes)
        assertDecoding([], fails: .invalidPayload)
        assertDecoding([0x01], fails: .invalidPayload)
        assertDecoding([0x01, 0x00], fails: .invalidPayload)
        assertDecoding([0x01, 0x00] + keyBytes, fails: .invalidPayload)
        assertDecoding(Array(good.dropLast()), fails: .invalidPayload)
        assertDecoding(Array(good.prefix(7)), fails: .invalidPayload)
        assertDecoding([0x01, 0xc8] + Array("alice".utf8) + keyBytes, fails: .invalidPayload)
        assertDecoding([0x01, 0xff] + [UInt8](repeating: 0x78, count: 200), fails: .invalidPayload)
    }

    func testTrailingBytesAreInvalid() {
        let good = payload(uid: Array("alice".utf8), key: keyBytes)
        assertDecoding(good + [0x00], fails: .invalidPayload)
        assertDecoding(good + keyBytes, fails: .invalidPayload)
        assertDecoding([0x01, 0x04] + Array("alice".utf8) + keyBytes, fails: .invalidPayload)
    }

    func testInvalidUTF8UidsAreInvalid() {
        let invalid: [[UInt8]] = [
            [0xff], [0xfe], [0x80],                       // bytes that never start a sequence
            [0xc0, 0x80], [0xc1, 0xbf],                   // overlong two-byte forms
            [0xe0, 0x80, 0xaf], [0xe0, 0x9f, 0xbf],       // overlong three-byte forms
            [0xf0, 0x80, 0x80, 0xaf], [0xf0, 0x8f, 0xbf, 0xbf], // overlong four-byte forms
            [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],       // encoded surrogates U+D800, U+DFFF
            [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], // above U+10FFFF
            [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98],     // truncated sequences
            [0x61, 0xc3, 0x28], [0xe2, 0x28, 0xa1],       // bad continuation bytes
            Array("ok".utf8) + [0xfe],
        ]
        for uid in invalid {
            assertDecoding(payload(uid: uid, key: keyBytes), fails: .invalidPayload)
            XCTAssertThrowsError(try QRPayload(uidBytes: uid, identityKey: key))
        }
    }

    func testBoundaryUTF8UidsAreValid() throws {
        let valid: [[UInt8]] = [
            [0x00], [0x7f], [0xc2, 0x80], [0xdf, 0xbf], [0xe0, 0xa0, 0x80], [0xed, 0x9f, 0xbf],
            [0xee, 0x80, 0x80], [0xef, 0xbf, 0xbf], [0xf0, 0x90, 0x80, 0x80], [0xf4, 0x8f, 0xbf, 0xbf],
        ]
        for uid in valid {
            XCTAssertEqual(try QRPayload(decoding: payload(uid: uid, key: keyBytes)).uidBytes, uid)
        }
    }

    func testEncodingRejectsEmptyOrOverlongUids() {
        XCTAssertThrowsError(try QRPayload(uid: "", identityKey: key)) { XCTAssertEqual($0 as? VerificationError, .invalidPayload) }
        XCTAssertThrowsError(try QRPayload(uid: String(repeating: "x", count: 256), identityKey: key)) {
            XCTAssertEqual($0 as? VerificationError, .invalidPayload)
        }
        XCTAssertThrowsError(try QRPayload(uid: String(repeating: "€", count: 86), identityKey: key)) {
            XCTAssertEqual($0 as? VerificationError, .invalidPayload)
        }
        XCTAssertNil(try? Ed25519.PublicKey(rawRepresentation: [UInt8](repeating: 1, count: 31)), "keys are typed: 32 bytes")
    }
}
