import SignalPrimitives
import XCTest

final class Ed25519Tests: XCTestCase {
    /// ℓ = 2^252 + 27742317777372353535851937790883648493 (RFC 8032 §5.1), little-endian.
    static let groupOrder = "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010"
    /// RFC 8032 §7.1 TEST 1 secret key (its public key and signature are in TestVectors/rfc).
    static let rfcTest1Seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"

    func testRFC8032SignaturesVerify() throws {
        for vector in try RFCVectors.cases("ed25519_rfc8032.json") {
            let publicKey = try XCTUnwrap(vector.group["publicKey"] as? [String: Any])
            let key = try Ed25519.PublicKey(rawRepresentation: bytes(try XCTUnwrap(publicKey["pk"] as? String)))
            let message = try vector.hex("msg")
            let signature = try vector.hex("sig")
            XCTAssertTrue(key.isValidSignature(signature, for: message), vector.comment)
            var tampered = signature
            tampered[0] ^= 1
            XCTAssertFalse(key.isValidSignature(tampered, for: message), vector.comment)
        }
    }

    func testRFC8032Test1SeedGivesItsPublicKeyAndSignature() throws {
        let vector = try XCTUnwrap(RFCVectors.cases("ed25519_rfc8032.json").first { $0.comment.hasSuffix("TEST 1") })
        let publicKey = try XCTUnwrap(vector.group["publicKey"] as? [String: Any])
        let key = try Ed25519.PrivateKey(seed: bytes(Self.rfcTest1Seed))
        XCTAssertEqual(key.publicKey.hexString, publicKey["pk"] as? String)
        XCTAssertEqual(key.signature(for: try vector.hex("msg")), try vector.hex("sig"))
    }

    func testSignatureIntoABufferEqualsTheArrayVariant() throws {
        let key = try Ed25519.PrivateKey()
        let message = counting(100)
        var buffer = [UInt8](repeating: 0, count: 64)
        try message.withUnsafeBytes { (m: UnsafeRawBufferPointer) throws in
            try buffer.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) throws in
                try key.signature(for: m, into: out)
            }
        }
        XCTAssertEqual(buffer, key.signature(for: message))
        XCTAssertTrue(key.publicKey.isValidSignature(buffer, for: message))
    }

    func testNonCanonicalSIsRejected() throws {
        let key = try Ed25519.PrivateKey()
        let message = counting(32)
        let signature = key.signature(for: message)
        XCTAssertTrue(key.publicKey.isValidSignature(signature, for: message))
        // S + ℓ encodes the same scalar mod ℓ: lax verifiers accept it, libsodium must not.
        let order = bytes(Self.groupOrder)
        var malleated = Array(signature[0..<32])
        var carry = 0
        for index in 0..<32 {
            let sum = Int(signature[32 + index]) + Int(order[index]) + carry
            malleated.append(UInt8(sum & 0xff))
            carry = sum >> 8
        }
        XCTAssertEqual(carry, 0)
        XCTAssertFalse(key.publicKey.isValidSignature(malleated, for: message))
    }

    func testSmallOrderPublicKeyAndRAreRejected() throws {
        // A = R = identity, S = 0 satisfies [S]B = R + [k]A for every message: only a strict
        // verifier refuses it.
        let identity = [1] + [UInt8](repeating: 0, count: 31)
        let key = try Ed25519.PublicKey(rawRepresentation: identity)
        XCTAssertFalse(key.isValidPoint)
        XCTAssertFalse(key.isValidSignature(identity + [UInt8](repeating: 0, count: 32), for: counting(10)))
        assertThrows(.invalidKey) { () throws(CryptoError) in try key.convertToX25519() }
    }

    func testEveryEntryPointValidatesLengths() throws {
        for count in [0, 31, 33, 64] {
            assertThrows(.invalidKeyLength(expected: 32, actual: count)) { () throws(CryptoError) in
                try Ed25519.PrivateKey(seed: counting(count))
            }
            assertThrows(.invalidKeyLength(expected: 32, actual: count)) { () throws(CryptoError) in
                try Ed25519.PrivateKey(seedStorage: SecureBytes(copying: counting(count)))
            }
            assertThrows(.invalidKeyLength(expected: 32, actual: count)) { () throws(CryptoError) in
                try Ed25519.PublicKey(rawRepresentation: counting(count))
            }
        }
        let key = try Ed25519.PrivateKey()
        var short = [UInt8](repeating: 0, count: 63)
        short.withUnsafeMutableBytes { out in
            [UInt8]().withUnsafeBytes { message in
                assertThrows(.bufferTooSmall(required: 64, actual: 63)) { () throws(CryptoError) in
                    try key.signature(for: message, into: out)
                }
            }
        }
        let signature = key.signature(for: [])
        for length in [0, 63, 65] {
            let wrong = Array((signature + [0]).prefix(length))
            XCTAssertFalse(key.publicKey.isValidSignature(wrong, for: []), "a \(length)-byte signature")
        }
    }

    func testPrivateKeyDescriptionsAreRedacted() throws {
        let seed = counting(32, from: 0x40)
        let key = try Ed25519.PrivateKey(seed: seed)
        XCTAssertEqual(key.seedRepresentation, seed)
        for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key)] {
            XCTAssertFalse(text.contains(Hex.encode(seed)), text)
            XCTAssertTrue(text.contains("redacted"), text)
        }
    }
}
