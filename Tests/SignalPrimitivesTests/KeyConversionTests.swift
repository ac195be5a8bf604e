import CSodium
import XCTest
@testable import SignalPrimitives

final class KeyConversionTests: XCTestCase {
    /// SPEC §1: the Swift GF(2^255−19) map must equal libsodium's crypto_sign_ed25519_pk_to_curve25519.
    func testEdToXPublicMatchesLibsodiumOnTenThousandRandomKeys() throws {
        for _ in 0..<10_000 {
            let key = try Ed25519.PrivateKey()
            var expected = [UInt8](repeating: 0, count: 32)
            let rc = key.publicKey.rawRepresentation.withUnsafeBytes { pk in
                expected.withUnsafeMutableBytes { out in
                    crypto_sign_ed25519_pk_to_curve25519(out.u8, pk.u8)
                }
            }
            XCTAssertEqual(rc, 0)
            XCTAssertEqual(try key.publicKey.convertToX25519().rawRepresentation, expected)
        }
    }

    func testEdSeedToXPrivateMatchesPublicConversion() throws {
        for _ in 0..<200 {
            let key = try Ed25519.PrivateKey()
            XCTAssertEqual(key.convertToX25519().publicKey, try key.publicKey.convertToX25519())
        }
    }

    func testXToEdRoundTripsUpToTheSignBit() throws {
        for _ in 0..<1_000 {
            let ed = try Ed25519.PrivateKey().publicKey
            let x = try ed.convertToX25519()
            var expected = ed.rawRepresentation
            expected[31] &= 0x7f
            XCTAssertEqual(x.convertToEd25519().rawRepresentation, expected)
        }
    }

    func testFieldInverseOfRandomElements() {
        for _ in 0..<1_000 {
            var bytes = SecureRandom.bytes(32)
            bytes[31] &= 0x7f
            let a = FieldElement(bytes: bytes)
            guard a.encoded != [UInt8](repeating: 0, count: 32) else { continue }
            XCTAssertEqual((a * a.inverted()).encoded, FieldElement.one.encoded)
            XCTAssertEqual(((a - a) + a).encoded, a.encoded)
        }
    }
}
