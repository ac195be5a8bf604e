import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit

/// The AEAD step shared by the ratchet, sender keys and self-encryption agrees with the
/// composition of the public pieces it replaces: `MessagePadding.pad` then
/// `AES256GCM.seal`, and `AES256GCM.open` then `MessagePadding.unpad`.
final class PaddedAEADTests: XCTestCase {
    static let key = SymmetricKey(data: (0 ..< 32).map { UInt8($0 &* 7 &+ 1) })
    static let nonce: [UInt8] = (0 ..< 12).map { UInt8(0xC0 &+ $0) }
    static let aad = Array("header".utf8)

    /// Plaintext lengths around every bucket edge that matters here (SPEC §2: 64-byte buckets
    /// hold 59 bytes), plus an empty one and a multi-bucket one.
    static let lengths = [0, 1, 58, 59, 60, 123, 124, 1000, 1019, 1020, 65531, 65532]

    static func plaintext(_ count: Int) -> [UInt8] { (0 ..< count).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) } }

    func sealed(_ plaintext: [UInt8]) throws -> [UInt8] {
        let count = try MessagePadding.checkedPaddedLength(forPlaintextCount: plaintext.count) + AES256GCM.tagByteCount
        var output = [UInt8](repeating: 0xEE, count: count)
        try Self.key.withUnsafeBytes { key in
            try plaintext.withBytes { input throws(SessionError) in
                try output.withMutableBytes { out throws(SessionError) in
                    try Self.nonce.withBytes { nonce throws(SessionError) in
                        try Self.aad.withBytes { aad throws(SessionError) in
                            try PaddedAEAD.seal(input, key: key, nonce: nonce, authenticating: aad, into: out)
                        }
                    }
                }
            }
        }
        return output
    }

    func opened(_ ciphertext: [UInt8], aad: [UInt8] = PaddedAEADTests.aad) throws -> [UInt8] {
        try Self.key.withUnsafeBytes { key in
            try ciphertext.withBytes { input throws(SessionError) in
                try Self.nonce.withBytes { nonce throws(SessionError) in
                    try aad.withBytes { aad throws(SessionError) in
                        try PaddedAEAD.open(input, key: key, nonce: nonce, authenticating: aad)
                    }
                }
            }
        }
    }

    func testSealingEqualsPaddingThenAESGCMAndOpeningReturnsThePlaintext() throws {
        for count in Self.lengths {
            let plaintext = Self.plaintext(count)
            let expected = try AES256GCM.seal(MessagePadding.pad(plaintext), using: Self.key, nonce: Self.nonce, authenticating: Self.aad)
            let ciphertext = try sealed(plaintext)
            XCTAssertEqual(ciphertext, expected, "length \(count)")
            XCTAssertEqual(try opened(ciphertext), plaintext, "length \(count)")
        }
    }

    func testAForgedTagOrShortInputIsInvalidMessageAndBadPaddingIsInvalidPadding() throws {
        let ciphertext = try sealed(Self.plaintext(10))
        var forged = ciphertext
        forged[forged.count - 1] ^= 0x01
        XCTAssertThrowsError(try opened(forged)) { XCTAssertEqual($0 as? SessionError, .invalidMessage) }
        XCTAssertThrowsError(try opened(ciphertext, aad: [])) { XCTAssertEqual($0 as? SessionError, .invalidMessage) }
        XCTAssertThrowsError(try opened(Array(ciphertext.prefix(15)))) { XCTAssertEqual($0 as? SessionError, .invalidMessage) }
        // Authentic plaintexts that are not valid padding: a wrong marker, a fill longer than the space.
        for padded: [UInt8] in [[0x02] + [UInt8](repeating: 0, count: 63), [0x01] + [UInt8](repeating: 0, count: 59) + [0, 0, 0, 60], [], [1, 0, 0, 0]] {
            let authentic = try AES256GCM.seal(padded, using: Self.key, nonce: Self.nonce, authenticating: Self.aad)
            XCTAssertThrowsError(try opened(authentic)) { XCTAssertEqual($0 as? SessionError, .invalidPadding) }
        }
        // The empty plaintext with the largest fill its length allows opens.
        let emptiest = try AES256GCM.seal([0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11], using: Self.key,
                                          nonce: Self.nonce, authenticating: Self.aad)
        XCTAssertEqual(try opened(emptiest), [])
    }
}
