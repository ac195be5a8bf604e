@testable import SignalPrimitives
import XCTest

final class ChaCha20Poly1305Tests: XCTestCase {
    /// RFC 8439 §2.8.2 (the AEAD_CHACHA20_POLY1305 test vector).
    func testRFC8439KnownAnswer() throws {
        let plaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let aad = bytes("50515253c0c1c2c3c4c5c6c7")
        let key = SymmetricKey(data: bytes("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"))
        let nonce = bytes("070000004041424344454647")
        let expected = bytes(
            "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
                + "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
                + "3ff4def08e4b7a9de576d26586cec64b6116" + "1ae10b594f09e26a7e902ecbd0600691")
        let sealed = try ChaCha20Poly1305.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
        XCTAssertEqual(sealed, expected)
        XCTAssertEqual(try ChaCha20Poly1305.open(sealed, using: key, nonce: nonce, authenticating: aad), plaintext)
    }

    func testAnyChangedByteFailsAuthenticationAndReleasesNothing() throws {
        let key = SymmetricKey(data: SecureRandom.bytes(32))
        let nonce = SecureRandom.bytes(12)
        let plaintext = SecureRandom.bytes(40)
        let sealed = try ChaCha20Poly1305.seal(plaintext, using: key, nonce: nonce)
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            var output = [UInt8](repeating: 0xAA, count: plaintext.count)
            assertThrowsThroughBuffers(.authenticationFailure) {
                try key.withUnsafeBytes { k in
                    try tampered.withUnsafeBytes { c in
                        try nonce.withUnsafeBytes { n in
                            try output.withUnsafeMutableBytes { o in
                                try ChaCha20Poly1305.open(c, key: k, nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0), into: o)
                            }
                        }
                    }
                }
            }
            // libsodium checks the tag first and wipes the output on failure.
            XCTAssertTrue(output.allSatisfy { $0 == 0 } || output.allSatisfy { $0 == 0xAA }, "bytes released, tampered byte \(index)")
        }
        assertThrows(.authenticationFailure) { () throws(CryptoError) in try ChaCha20Poly1305.open(sealed, using: key, nonce: nonce, authenticating: [0]) }
    }

    func testSealsInPlace() throws {
        let key = SymmetricKey(data: SecureRandom.bytes(32))
        let nonce = SecureRandom.bytes(12)
        let plaintext = SecureRandom.bytes(100)
        let expected = try ChaCha20Poly1305.seal(plaintext, using: key, nonce: nonce)
        var buffer = plaintext + [UInt8](repeating: 0, count: 16)
        let written = try buffer.withUnsafeMutableBytes { b in
            try key.withUnsafeBytes { k in
                try nonce.withUnsafeBytes { n in
                    try ChaCha20Poly1305.seal(UnsafeRawBufferPointer(rebasing: b[0..<100]), key: k, nonce: n,
                                              authenticating: UnsafeRawBufferPointer(start: nil, count: 0), into: b)
                }
            }
        }
        XCTAssertEqual(written, 116)
        XCTAssertEqual(buffer, expected)
    }

    func testWrongLengthsAreTypedErrors() {
        let key = SymmetricKey(data: SecureRandom.bytes(32))
        assertThrows(.invalidKeyLength(expected: 32, actual: 16)) {
            () throws(CryptoError) in try ChaCha20Poly1305.seal([1], using: SymmetricKey(data: SecureRandom.bytes(16)), nonce: SecureRandom.bytes(12))
        }
        for nonceCount in [0, 8, 11, 13, 24] {
            assertThrows(.invalidNonceLength(expected: 12, actual: nonceCount)) {
                () throws(CryptoError) in try ChaCha20Poly1305.seal([1], using: key, nonce: SecureRandom.bytes(nonceCount))
            }
        }
        assertThrows(.ciphertextTooShort(minimum: 16, actual: 15)) {
            () throws(CryptoError) in try ChaCha20Poly1305.open(SecureRandom.bytes(15), using: key, nonce: SecureRandom.bytes(12))
        }
        XCTAssertEqual(ChaCha20Poly1305.maximumMessageByteCount, 64 * (UInt64(1) << 32) - 64)
    }
}
