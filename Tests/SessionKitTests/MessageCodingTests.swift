import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit

/// The wire formats of SPEC §4, decoded from bytes assembled by hand.
final class MessageCodingTests: XCTestCase {
    private let key = (0 ..< 32).map { UInt8($0) }        // canonical: top byte 0x1f
    private let otherKey = (0 ..< 32).map { UInt8(100 + $0) & 0x7F }

    private func header(key: [UInt8], pn: UInt32, n: UInt32) -> [UInt8] {
        [UInt8(0x21)] + key + u32(pn) + u32(n)
    }

    func testTypeBytesAreThoseOfVersion2() {
        XCTAssertEqual(WireType.ratchetMessage, 0x21)
        XCTAssertEqual(WireType.preKeyMessage, 0x22)
        XCTAssertEqual(WireType.senderKeyDistribution, 0x23)
        XCTAssertEqual(WireType.senderKeyMessage, 0x24)
        XCTAssertEqual(WireType.selfEncrypted, 0x25)
        XCTAssertEqual(WireType.preKeyBundle, 0x26)
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
        XCTAssertThrowsError(try RatchetMessage(serialized: [0x22] + valid.dropFirst())) { XCTAssertEqual($0 as? SessionError, .unsupportedVersion) }
        // Version 1's ratchet type byte.
        XCTAssertThrowsError(try RatchetMessage(serialized: [0x01] + valid.dropFirst())) { XCTAssertEqual($0 as? SessionError, .unsupportedVersion) }
        XCTAssertThrowsError(try RatchetMessage(serialized: [0x07, 0x00])) { XCTAssertEqual($0 as? SessionError, .unsupportedVersion) }
        var highBit = Array(valid.prefix(56))
        highBit[32] |= 0x80
        XCTAssertThrowsError(try RatchetMessage(serialized: highBit)) { XCTAssertEqual($0 as? SessionError, .invalidMessage, "length before key") }
        XCTAssertThrowsError(try RatchetMessage(serialized: flipped(valid, at: 32, bit: 7))) { XCTAssertEqual($0 as? SessionError, .invalidKey) }
    }

    func testPreKeyMessageLayoutWithAndWithoutOneTimePreKey() throws {
        let identity = [UInt8](repeating: 0x42, count: 32)
        let inner = header(key: otherKey, pn: 0, n: 5) + [UInt8](repeating: 0x33, count: 80)
        let withOPK = [0x22] + identity + key + [0, 0, 0x01, 0x02] + [0x01] + [0xAA, 0xBB, 0xCC, 0xDD] + inner
        let parsed = try PreKeyMessage(serialized: withOPK)
        XCTAssertEqual(parsed.prefix.identityKey.rawRepresentation, identity)
        XCTAssertEqual(parsed.prefix.baseKey.rawRepresentation, key)
        XCTAssertEqual(parsed.prefix.signedPreKeyID, 0x0102)
        XCTAssertEqual(parsed.prefix.oneTimePreKeyID, 0xAABB_CCDD)
        XCTAssertNil(parsed.prefix.kem)
        XCTAssertEqual(parsed.prefix.flags, 0x01)
        XCTAssertEqual(parsed.message.serialized, inner)
        XCTAssertEqual(parsed.message.counter, 5)
        // P is the prefix without its type byte; its digest is what X3DH hashes.
        XCTAssertEqual(parsed.prefix.bytes, Array(withOPK[1 ..< 74]))
        XCTAssertEqual(parsed.prefix.byteCount, 73)
        XCTAssertEqual(parsed.prefix.digest, SHA256.hash(Array(withOPK[1 ..< 74])))
        XCTAssertEqual(parsed.serialized, withOPK)

        let withoutOPK = [0x22] + identity + key + [0, 0, 0, 9] + [0x00] + inner
        let short = try PreKeyMessage(serialized: withoutOPK)
        XCTAssertNil(short.prefix.oneTimePreKeyID)
        XCTAssertEqual(short.prefix.byteCount, 69)
        XCTAssertEqual(short.prefix.bytes, Array(withoutOPK[1 ..< 70]))
        guard case .preKey = try IncomingMessage(serialized: withoutOPK) else { return XCTFail("not a prekey message") }
    }

    /// With a KEM part (flags bit 1): `u32(kem_id) || CT (1088)` after the optional one-time
    /// prekey id, 1092 more prefix bytes.
    func testPreKeyMessageLayoutWithAKEMPart() throws {
        let identity = [UInt8](repeating: 0x42, count: 32)
        let ciphertext = (0 ..< 1088).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let inner = header(key: otherKey, pn: 0, n: 0) + [UInt8](repeating: 0x33, count: 80)
        let both = [0x22] + identity + key + [0, 0, 0, 3] + [0x03] + [0, 0, 0, 4] + [0, 0, 0x01, 0x05] + ciphertext + inner
        let parsed = try PreKeyMessage(serialized: both)
        XCTAssertEqual(parsed.prefix.oneTimePreKeyID, 4)
        XCTAssertEqual(parsed.prefix.kem?.preKeyID, 0x0105)
        XCTAssertEqual(parsed.prefix.kem?.ciphertext, ciphertext)
        XCTAssertEqual(parsed.prefix.byteCount, 69 + 4 + 1092)
        XCTAssertEqual(parsed.prefix.bytes, Array(both[1 ..< 70 + 4 + 1092]))
        XCTAssertEqual(parsed.message.serialized, inner)
        XCTAssertEqual(parsed.serialized, both)

        let kemOnly = [0x22] + identity + key + [0, 0, 0, 3] + [0x02] + [0, 0, 0, 6] + ciphertext + inner
        let kemParsed = try PreKeyMessage(serialized: kemOnly)
        XCTAssertNil(kemParsed.prefix.oneTimePreKeyID)
        XCTAssertEqual(kemParsed.prefix.kem?.preKeyID, 6)
        XCTAssertEqual(kemParsed.prefix.flags, 0x02)
        XCTAssertEqual(kemParsed.message.serialized, inner)
        // Built back from its parts, the prefix gives the same bytes.
        let rebuilt = PreKeyMessage.Prefix(
            identityKey: kemParsed.prefix.identityKey, baseKey: kemParsed.prefix.baseKey, signedPreKeyID: 3, oneTimePreKeyID: nil,
            kem: try .init(preKeyID: 6, ciphertext: ciphertext))
        XCTAssertEqual(rebuilt.bytes, Array(kemOnly[1 ..< 70 + 1092]))
        XCTAssertThrowsError(try PreKeyMessage.Prefix.KEMPart(preKeyID: 6, ciphertext: Array(ciphertext.dropLast()))) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage)
        }

        // The KEM part present by its flag but cut short: a length error, before the inner type byte.
        XCTAssertThrowsError(try IncomingMessage(serialized: Array(kemOnly.prefix(70 + 1092 + 56)))) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage)
        }
        // Flag bit 1 on a message without a KEM part: the inner message is read as CT.
        let noKEM = [0x22] + identity + key + [0, 0, 0, 3] + [0x00] + inner
        XCTAssertThrowsError(try IncomingMessage(serialized: replacing(noKEM, at: 69, with: [0x02]))) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage)
        }
    }

    func testPreKeyMessageRejectsBadFlagsLengthsAndTypes() {
        let identity = [UInt8](repeating: 0x42, count: 32)
        let inner = header(key: otherKey, pn: 0, n: 0) + [UInt8](repeating: 0x33, count: 16)
        let noOPK = [0x22] + identity + key + [0, 0, 0, 1] + [0x00] + inner
        let opk = [0x22] + identity + key + [0, 0, 0, 1] + [0x01, 0, 0, 0, 2] + inner
        func expect(_ bytes: [UInt8], _ error: SessionError, _ why: String) {
            XCTAssertThrowsError(try IncomingMessage(serialized: bytes), why) { XCTAssertEqual($0 as? SessionError, error, why) }
        }
        XCTAssertNoThrow(try IncomingMessage(serialized: noOPK))
        XCTAssertNoThrow(try IncomingMessage(serialized: opk))
        expect(Array(noOPK.prefix(69)), .invalidMessage, "69 bytes")
        expect(Array(noOPK.prefix(70 + 56)), .invalidMessage, "70 + 56 bytes")
        expect(Array(opk.prefix(74 + 56)), .invalidMessage, "74 + 56 bytes")
        expect(replacing(noOPK, at: 69, with: [0x04]), .invalidMessage, "flag 0x04")
        expect(replacing(noOPK, at: 69, with: [0x80]), .invalidMessage, "flag 0x80")
        expect(replacing(noOPK, at: 69, with: [0xFF]), .invalidMessage, "flag 0xff")
        expect(replacing(noOPK, at: 70, with: [0x22]), .unsupportedVersion, "inner type byte")
        expect(replacing(noOPK, at: 70, with: [0x01]), .unsupportedVersion, "inner type byte of version 1")
        // Reading of SPEC §4 (pinned here): the inner message's length (41 + 16) is a length,
        // checked before its type byte, so a short inner message with a wrong type is invalidMessage.
        expect(Array(replacing(noOPK, at: 70, with: [0x01]).prefix(70 + 56)), .invalidMessage, "short inner, wrong type")
        // A KEM flag needs 1092 more prefix bytes before the inner message can start.
        expect(replacing(noOPK, at: 69, with: [0x02]), .invalidMessage, "KEM flag without a KEM part")
        expect(flipped(noOPK, at: 64, bit: 7), .invalidKey, "EK_A bit 255")
        expect(flipped(opk, at: 74 + 32, bit: 7), .invalidKey, "inner header.dh bit 255")
        expect([], .invalidMessage, "empty")
        expect([0x05], .unsupportedVersion, "unknown type")
        expect([0x02] + noOPK.dropFirst(), .unsupportedVersion, "version 1's prekey type byte")
    }
}
