import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit

/// SPEC §6: sealing to oneself, and every way opening can fail.
final class SelfEncryptionTests: XCTestCase {
    private typealias Support = GroupTestSupport

    /// The identity key whose seed is the bytes 0, 1, …, 31.
    private let identitySeed: [UInt8] = Array(0 ..< 32)
    private let context = Array("conversation:42".utf8)

    private func cipher(nonce: [UInt8]? = nil) throws -> SelfEncryption {
        let key = try Ed25519.PrivateKey(seed: identitySeed)
        guard let nonce else { return SelfEncryption(identityKey: key) }
        return SelfEncryption(identityKey: key, using: Support.FixedRandomSource(bytes: nonce))
    }

    private func assertOpenFails(_ sealed: [UInt8], context: [UInt8], with expected: SessionError,
                                 using cipher: SelfEncryption? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let opener = try cipher ?? self.cipher()
        XCTAssertThrowsError(try opener.open(sealed, context: context), file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, file: file, line: line)
        }
    }

    func testRoundTripsForManyLengthsAndContexts() throws {
        let cipher = try cipher()
        for length in [0, 1, 58, 59, 60, 1000, 70_000] {
            for context in [[], self.context, [0x00], [UInt8](repeating: 0xee, count: 1000)] {
                let plaintext = (0 ..< length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                let sealed = try cipher.seal(plaintext, context: context)
                XCTAssertEqual(sealed.count, 1 + 24 + MessagePadding.paddedLength(forPlaintextCount: length) + 16)
                XCTAssertEqual(try cipher.open(sealed, context: context), plaintext)
            }
        }
    }

    func testAnotherDeviceWithTheSameIdentityOpens() throws {
        let sealed = try cipher().seal([1, 2, 3], context: context)
        let sameIdentity = SelfEncryption(identityKey: try Ed25519.PrivateKey(seed: identitySeed))
        XCTAssertEqual(try sameIdentity.open(sealed, context: context), [1, 2, 3])
    }

    func testSealedBlobFollowsSpecSection6() throws {
        // Recompute with the primitives: self_key = HKDF(ZERO32, seed, "SessionKit Self v2", 32),
        // sealed = 0x25 || nonce (24) || XChaCha20-Poly1305(self_key, nonce, pad(pt), aad = 0x25 || nonce || context).
        let nonce: [UInt8] = Array(100 ..< 124)
        let sealed = try cipher(nonce: nonce).seal([7, 7], context: context)
        XCTAssertEqual(sealed[0], 0x25)
        XCTAssertEqual(Array(sealed[1 ..< 25]), nonce)
        let selfKey = try HKDF.deriveKey(inputKeyMaterial: identitySeed, salt: [UInt8](repeating: 0, count: 32),
                                         info: Array("SessionKit Self v2".utf8), outputByteCount: 32)
        let padded = try XChaCha20Poly1305.open(Array(sealed[25...]), using: SymmetricKey(data: selfKey), nonce: nonce,
                                                authenticating: [0x25] + nonce + context)
        XCTAssertEqual(padded, try MessagePadding.pad([7, 7]))
        XCTAssertEqual(sealed, [0x25] + nonce + (try XChaCha20Poly1305.seal(
            MessagePadding.pad([7, 7]), using: SymmetricKey(data: selfKey), nonce: nonce, authenticating: [0x25] + nonce + context)))
        XCTAssertEqual(SelfEncryption.minimumByteCount, 41)
    }

    func testEachSealDrawsAFreshNonce() throws {
        let cipher = try cipher()
        let first = try cipher.seal([1], context: context)
        let second = try cipher.seal([1], context: context)
        XCTAssertNotEqual(Array(first[1 ..< 25]), Array(second[1 ..< 25]))
        XCTAssertNotEqual(first, second)
    }

    func testFirstByteOtherThan0x25IsUnsupportedVersion() throws {
        let sealed = try cipher().seal([1, 2, 3], context: context)
        // 0x20 is version 1's self-encryption byte.
        for version: UInt8 in [0x00, 0x01, 0x11, 0x20, 0x21, 0x24, 0x26, 0xff] {
            try assertOpenFails([version] + sealed.dropFirst(), context: context, with: .unsupportedVersion)
            try assertOpenFails([version], context: context, with: .unsupportedVersion)
        }
    }

    func testShortInputIsInvalidMessage() throws {
        let sealed = try cipher().seal([1, 2, 3], context: context)
        for length in [0, 1, 25, 40] {
            try assertOpenFails(Array(sealed.prefix(length)), context: context, with: .invalidMessage)
        }
    }

    func testWrongKeyContextOrTagIsInvalidMessage() throws {
        let sealed = try cipher().seal([1, 2, 3], context: context)
        let stranger = SelfEncryption(identityKey: try Ed25519.PrivateKey(seed: [UInt8](repeating: 9, count: 32)))
        try assertOpenFails(sealed, context: context, with: .invalidMessage, using: stranger)
        try assertOpenFails(sealed, context: [], with: .invalidMessage)
        try assertOpenFails(sealed, context: context + [0], with: .invalidMessage)
        try assertOpenFails(sealed, context: Array("conversation:43".utf8), with: .invalidMessage)
        for position in [1, 24, 25, 40, sealed.count - 16, sealed.count - 1] {
            var altered = sealed
            altered[position] ^= 0x01
            try assertOpenFails(altered, context: context, with: .invalidMessage)
        }
        try assertOpenFails(Array(sealed.dropLast()), context: context, with: .invalidMessage)
        try assertOpenFails(sealed + [0], context: context, with: .invalidMessage)
    }

    func testAuthenticPlaintextThatDoesNotUnpadIsInvalidPadding() throws {
        let selfKey = try HKDF.deriveKey(inputKeyMaterial: identitySeed, salt: [UInt8](repeating: 0, count: 32),
                                         info: Array("SessionKit Self v2".utf8), outputByteCount: 32)
        let nonce = [UInt8](repeating: 5, count: 24)
        let good = try MessagePadding.pad([1, 2, 3])
        let badPaddings: [[UInt8]] = [[], [0x01, 0, 0], [0x00] + good.dropFirst(), [0x02] + good.dropFirst(),
                                      good.dropLast(4) + [0, 0, 0, 60], good.dropLast(4) + [0xff, 0xff, 0xff, 0xff]]
        for padded in badPaddings {
            let sealed = [0x25] + nonce + (try XChaCha20Poly1305.seal(padded, using: SymmetricKey(data: selfKey), nonce: nonce,
                                                                       authenticating: [0x25] + nonce + context))
            try assertOpenFails(sealed, context: context, with: .invalidPadding)
        }
    }

    func testDescriptionHidesTheKey() throws {
        XCTAssertEqual(String(describing: try cipher()), "SelfEncryption(key redacted)")
    }
}
