import CSodium
import XCTest
@testable import SignalPrimitives

/// X25519 public keys computed through the Ed25519 fixed-base table must be exactly libsodium's
/// `crypto_scalarmult_base` (the Montgomery ladder), for every secret.
final class X25519FixedBaseTests: XCTestCase {
    func testPublicKeyEqualsTheLadderOnTenThousandRandomSecrets() throws {
        for _ in 0..<10_000 {
            let secret = SecureRandom.bytes(32)
            XCTAssertEqual(try fixedBasePublicKey(secret), ladderPublicKey(secret), "secret \(Hex.encode(secret))")
        }
    }

    func testGeneratedKeysCarryTheLadderPublicKey() throws {
        for _ in 0..<1_000 {
            let key = try X25519.PrivateKey()
            XCTAssertEqual(key.publicKey.rawRepresentation, ladderPublicKey(key.rawRepresentation))
        }
    }

    /// RFC 7748 §6.1: Alice's and Bob's key pairs.
    func testRFC7748PublicKeys() throws {
        let pairs = [
            ("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
             "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"),
            ("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
             "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"),
        ]
        for (secret, expected) in pairs {
            let key = try X25519.PrivateKey(rawRepresentation: try XCTUnwrap(Hex.decode(secret)))
            XCTAssertEqual(key.publicKey.hexString, expected)
        }
    }

    /// Secrets at the edges of clamping and of the reduction mod L: all zeros (clamped to
    /// 2^254), all ones (2^255 − 8), and clamped values m·L + d for m = 4…7 that land just
    /// above 0 or just below L once reduced (a clamped value is never a multiple of L).
    func testEdgeScalarsEqualTheLadder() throws {
        var secrets: [[UInt8]] = [
            [UInt8](repeating: 0, count: 32),
            [UInt8](repeating: 0xff, count: 32),
            [UInt8](repeating: 0, count: 31) + [0x40],
            [UInt8](repeating: 0xff, count: 31) + [0x7f],
        ]
        var reductionEdges = 0
        for multiple in UInt64(4)...7 {
            for offset in Int64(-64)...64 {
                let value = Self.multipleOfL(multiple, plus: offset)
                // Keep only values that clamping leaves unchanged: 8 | value, 2^254 ≤ value < 2^255.
                guard value[0] & 7 == 0, value[31] & 0xc0 == 0x40 else { continue }
                secrets.append(value)
                // The same clamped value from a secret with the clamped-away bits set.
                var dirty = value
                dirty[0] |= 7
                dirty[31] |= 0x80
                secrets.append(dirty)
                reductionEdges += 1
            }
        }
        XCTAssertGreaterThanOrEqual(reductionEdges, 4 * 16)
        for secret in secrets {
            XCTAssertEqual(try fixedBasePublicKey(secret), ladderPublicKey(secret), "secret \(Hex.encode(secret))")
        }
    }

    /// The Ed25519 base point (y = 4/5) maps to the X25519 base point u = 9 (RFC 7748 §4.1).
    func testEdwardsBasePointMapsToNine() throws {
        var y = [UInt8](repeating: 0x66, count: 32)
        y[0] = 0x58
        let u = FieldElement.montgomeryU(fromEdwardsY: FieldElement(bytes: y)).encoded
        XCTAssertEqual(u, [9] + [UInt8](repeating: 0, count: 31))
    }

    func testSquaringEqualsMultiplicationByItself() {
        var elements = [FieldElement(FieldElement.mask51, FieldElement.mask51, FieldElement.mask51,
                                     FieldElement.mask51, FieldElement.mask51)]
        for _ in 0..<2_000 {
            var bytes = SecureRandom.bytes(32)
            bytes[31] &= 0x7f
            elements.append(FieldElement(bytes: bytes))
        }
        for element in elements {
            XCTAssertEqual(element.squared().encoded, (element * element).encoded)
            XCTAssertEqual(element.squared(times: 3).encoded, (element * element * element * element).squared().encoded)
        }
    }

    // MARK: Helpers

    /// The fixed-base route itself (it must succeed: the ladder fallback must not hide a failure).
    private func fixedBasePublicKey(_ secret: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let succeeded = secret.withUnsafeBytes { s in out.withUnsafeMutableBytes { X25519FixedBase.publicKey(secret: s, into: $0) } }
        XCTAssertTrue(succeeded, "the Edwards route refused \(Hex.encode(secret))")
        let viaPublicAPI = try X25519.PrivateKey(rawRepresentation: secret).publicKey.rawRepresentation
        XCTAssertEqual(viaPublicAPI, out)
        return out
    }

    private func ladderPublicKey(_ secret: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        XCTAssertEqual(crypto_scalarmult_base(&out, secret), 0)
        return out
    }

    /// L = 2^252 + 27742317777372353535851937790883648493 (RFC 8032 §5.1), little-endian.
    private static let groupOrder: [UInt8] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ]

    /// m·L + d as 32 little-endian bytes (the caller keeps it in [0, 2^256)).
    static func multipleOfL(_ multiple: UInt64, plus offset: Int64) -> [UInt8] {
        var limbs = [Int64](repeating: 0, count: 32)
        for index in 0..<32 { limbs[index] = Int64(groupOrder[index]) * Int64(multiple) }
        limbs[0] += offset
        var out = [UInt8](repeating: 0, count: 32)
        var carry: Int64 = 0
        for index in 0..<32 {
            let value = limbs[index] + carry
            let byte = ((value % 256) + 256) % 256
            out[index] = UInt8(byte)
            carry = (value - byte) / 256
        }
        return out
    }
}
