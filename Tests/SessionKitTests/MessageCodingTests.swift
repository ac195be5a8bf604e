import SignalPrimitives
import XCTest
@testable import SessionKit

/// The wire formats of SPEC §4, decoded from bytes assembled by hand.
final class MessageCodingTests: XCTestCase {
    private let key = (0 ..< 32).map { UInt8($0) }        // canonical: top byte 0x1f
    private let otherKey = (0 ..< 32).map { UInt8(100 + $0) & 0x7F }

    private func header(key: [UInt8], pn: UInt32, n: UInt32) -> [UInt8] {
        var out = [UInt8(0x01)] + key
        out.appendBigEndian(pn)
        out.appendBigEndian(n)
        return out
    }

    func testRatchetMessageHeaderLayout() throws {
        let bytes = header(key: key, pn: 0x0102_0304, n: 0xA0B0_C0D0) + [UInt8](repeating: 0xEE, count: 16)
        let message = try RatchetMessage(serialized: bytes)
        XCTAssertEqual(message.ratchetKey.rawRepresentation, key)
        XCTAssertEqual(message.previousCounter, 0x0102_0304)
        XCTAssertEqual(message.counter, 0xA0B0_C0D0)
        XCTAssertEqual(Array(message.header), Array(bytes.prefix(41)))
        XCTAssertEqual(Array(message.ciphertext), [UInt8](repeating: 0xEE, count: 16))
        XCTAssertEqual(message.serialized, bytes)
    }

    func testRatchetMessageChecksTypeThenLengthThenKey() {
        let valid = header(key: key, pn: 0, n: 0) + [UInt8](repeating: 0, count: 16)
        XCTAssertThrowsError(try RatchetMessage(serialized: [])) { XCTAssertEqual($0 as? SessionError, .invalidMessage) }
        XCTAssertThrowsError(try RatchetMessage(serialized: Array(valid.prefix(56)))) { XCTAssertEqual($0 as? SessionError, .invalidMessage) }
        XCTAssertThrowsError(try RatchetMessage(serialized: [0x02] + valid.dropFirst())) { XCTAssertEqual($0 as? SessionError, .unsupportedVersion) }
        XCTAssertThrowsError(try RatchetMessage(serialized: [0x07, 0x00])) { XCTAssertEqual($0 as? SessionError, .unsupportedVersion) }
        var highBit = Array(valid.prefix(56))
        highBit[32] |= 0x80
        XCTAssertThrowsError(try RatchetMessage(serialized: highBit)) { XCTAssertEqual($0 as? SessionError, .invalidMessage, "length before key") }
        XCTAssertThrowsError(try RatchetMessage(serialized: flipped(valid, at: 32, bit: 7))) { XCTAssertEqual($0 as? SessionError, .invalidKey) }
    }

    func testPreKeyMessageLayoutWithAndWithoutOneTimePreKey() throws {
        let identity = [UInt8](repeating: 0x42, count: 32)
        let inner = header(key: otherKey, pn: 0, n: 5) + [UInt8](repeating: 0x33, count: 80)
        let withOPK = [0x02] + identity + key + [0, 0, 0x01, 0x02] + [0x01] + [0xAA, 0xBB, 0xCC, 0xDD] + inner
        let parsed = try PreKeyMessage(serialized: withOPK)
        XCTAssertEqual(parsed.prefix.identityKey.rawRepresentation, identity)
        XCTAssertEqual(parsed.prefix.baseKey.rawRepresentation, key)
        XCTAssertEqual(parsed.prefix.signedPreKeyID, 0x0102)
        XCTAssertEqual(parsed.prefix.oneTimePreKeyID, 0xAABB_CCDD)
        XCTAssertEqual(parsed.message.serialized, inner)
        XCTAssertEqual(parsed.message.counter, 5)
        XCTAssertEqual(parsed.prefix.serialized, Array(withOPK.prefix(74)))
        XCTAssertEqual(parsed.serialized, withOPK)

        let withoutOPK = [0x02] + identity + key + [0, 0, 0, 9] + [0x00] + inner
        let short = try PreKeyMessage(serialized: withoutOPK)
        XCTAssertNil(short.prefix.oneTimePreKeyID)
        XCTAssertEqual(short.prefix.byteCount, 70)
        XCTAssertEqual(short.prefix.serialized, Array(withoutOPK.prefix(70)))
        guard case .preKey = try IncomingMessage(serialized: withoutOPK) else { return XCTFail("not a prekey message") }
    }

    func testPreKeyMessageRejectsBadFlagsLengthsAndTypes() {
        let identity = [UInt8](repeating: 0x42, count: 32)
        let inner = header(key: otherKey, pn: 0, n: 0) + [UInt8](repeating: 0x33, count: 16)
        let noOPK = [0x02] + identity + key + [0, 0, 0, 1] + [0x00] + inner
        let opk = [0x02] + identity + key + [0, 0, 0, 1] + [0x01, 0, 0, 0, 2] + inner
        func expect(_ bytes: [UInt8], _ error: SessionError, _ why: String) {
            XCTAssertThrowsError(try IncomingMessage(serialized: bytes), why) { XCTAssertEqual($0 as? SessionError, error, why) }
        }
        XCTAssertNoThrow(try IncomingMessage(serialized: noOPK))
        XCTAssertNoThrow(try IncomingMessage(serialized: opk))
        expect(Array(noOPK.prefix(69)), .invalidMessage, "69 bytes")
        expect(Array(noOPK.prefix(70 + 56)), .invalidMessage, "70 + 56 bytes")
        expect(Array(opk.prefix(74 + 56)), .invalidMessage, "74 + 56 bytes")
        expect(replacing(noOPK, at: 69, with: [0x02]), .invalidMessage, "flag 0x02")
        expect(replacing(noOPK, at: 69, with: [0xFF]), .invalidMessage, "flag 0xff")
        expect(replacing(noOPK, at: 70, with: [0x02]), .unsupportedVersion, "inner type byte")
        expect(flipped(noOPK, at: 64, bit: 7), .invalidKey, "EK_A bit 255")
        expect(flipped(opk, at: 74 + 32, bit: 7), .invalidKey, "inner header.dh bit 255")
        expect([], .invalidMessage, "empty")
        expect([0x05], .unsupportedVersion, "unknown type")
    }
}
