import SignalPrimitives
import XCTest

final class X25519Tests: XCTestCase {
    /// Points of small order on Curve25519, as listed in libsodium's `has_small_order` blocklist
    /// (and in Wycheproof's `LowOrderPublic` cases): 0, 1, two points of order 8, p − 1.
    static let smallOrderPoints = [
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ]

    func testRFC7748SharedSecretsFromTheArrayAndBufferEntryPoints() throws {
        for vector in try RFCVectors.cases("x25519_rfc7748.json") {
            let key = try X25519.PrivateKey(rawRepresentation: try vector.hex("private"))
            let peer = try X25519.PublicKey(rawRepresentation: try vector.hex("public"))
            let expected = try vector.hex("shared")
            XCTAssertEqual(try key.sharedSecret(with: peer).storage.bytes, expected, vector.comment)
            var buffer = [UInt8](repeating: 0, count: 32)
            try buffer.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) throws in
                try key.sharedSecret(with: peer, into: out)
            }
            XCTAssertEqual(buffer, expected, vector.comment)
            if peer.rawRepresentation == [9] + [UInt8](repeating: 0, count: 31) {
                XCTAssertEqual(key.publicKey.rawRepresentation, expected, "public key = X25519(sk, 9): \(vector.comment)")
            }
        }
    }

    func testBothSidesAgree() throws {
        for _ in 0..<50 {
            let alice = try X25519.PrivateKey()
            let bob = try X25519.PrivateKey()
            XCTAssertEqual(try alice.sharedSecret(with: bob.publicKey), try bob.sharedSecret(with: alice.publicKey))
        }
    }

    func testDHWithASmallOrderPointIsRejectedAsInvalidKey() throws {
        let key = try X25519.PrivateKey()
        for point in Self.smallOrderPoints {
            let peer = try X25519.PublicKey(rawRepresentation: bytes(point))
            assertThrows(.invalidKey) { () throws(CryptoError) in try key.sharedSecret(with: peer) }
            var buffer = [UInt8](repeating: 0xaa, count: 32)
            buffer.withUnsafeMutableBytes { out in
                assertThrows(.invalidKey) { () throws(CryptoError) in try key.sharedSecret(with: peer, into: out) }
            }
            XCTAssertEqual(buffer, [UInt8](repeating: 0, count: 32), "the output is wiped on failure")
        }
    }

    func testEveryEntryPointValidatesLengths() throws {
        for count in [0, 31, 33, 64] {
            assertThrows(.invalidKeyLength(expected: 32, actual: count)) { () throws(CryptoError) in
                try X25519.PrivateKey(rawRepresentation: counting(count))
            }
            assertThrows(.invalidKeyLength(expected: 32, actual: count)) { () throws(CryptoError) in
                try X25519.PrivateKey(bytes: SecureBytes(copying: counting(count)))
            }
            assertThrows(.invalidKeyLength(expected: 32, actual: count)) { () throws(CryptoError) in
                try X25519.PublicKey(rawRepresentation: counting(count))
            }
            assertThrows(.invalidKeyLength(expected: 32, actual: count)) { () throws(CryptoError) in
                try X25519.PublicKey(canonicalRepresentation: counting(count))
            }
        }
        for count in [0, 32, 34] {
            assertThrows(.invalidKeyLength(expected: 33, actual: count)) { () throws(CryptoError) in
                try X25519.PublicKey(signalEncoding: counting(count, from: 5))
            }
        }
        let key = try X25519.PrivateKey()
        var short = [UInt8](repeating: 0, count: 31)
        short.withUnsafeMutableBytes { out in
            assertThrows(.bufferTooSmall(required: 32, actual: 31)) { () throws(CryptoError) in
                try key.sharedSecret(with: key.publicKey, into: out)
            }
        }
    }

    func testWireKeysMustBeCanonical() throws {
        let p = bytes("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
        let pMinusOne = bytes("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
        var highBit = try X25519.PrivateKey().publicKey.rawRepresentation
        highBit[31] |= 0x80
        for bad in [p, bytes("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
                    [UInt8](repeating: 0xff, count: 32), highBit] {
            assertThrows(.invalidKey) { () throws(CryptoError) in try X25519.PublicKey(canonicalRepresentation: bad) }
            XCTAssertFalse(try X25519.PublicKey(rawRepresentation: bad).isCanonical)
        }
        XCTAssertTrue(try X25519.PublicKey(canonicalRepresentation: pMinusOne).isCanonical)
    }

    func testSignalEncodingIsTypeByte5AndRoundTrips() throws {
        let key = try X25519.PrivateKey().publicKey
        XCTAssertEqual(key.signalEncoding.count, 33)
        XCTAssertEqual(key.signalEncoding.first, 0x05)
        XCTAssertEqual(try X25519.PublicKey(signalEncoding: key.signalEncoding), key)
        assertThrows(.invalidKey) { () throws(CryptoError) in
            try X25519.PublicKey(signalEncoding: [0x06] + key.rawRepresentation)
        }
    }

    func testPrivateKeyIsStoredUnclampedAndDescriptionsAreRedacted() throws {
        let raw = [UInt8](repeating: 0xff, count: 32)   // clamping would change bytes 0 and 31
        let key = try X25519.PrivateKey(rawRepresentation: raw)
        XCTAssertEqual(key.rawRepresentation, raw)
        let secretHex = Hex.encode(raw)
        for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key)] {
            XCTAssertFalse(text.contains(secretHex), text)
            XCTAssertTrue(text.contains("redacted"), text)
        }
        XCTAssertTrue(key.description.contains(key.publicKey.hexString))
    }
}
