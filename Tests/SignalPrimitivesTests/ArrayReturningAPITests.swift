import CSodium
import XCTest
@testable import SignalPrimitives

/// The array-returning calls (digests, HMAC, AES-GCM) allocate their results on the fast paths
/// described in `ByteArrays`; they must still give the published answers and agree with the
/// caller-buffer calls.
final class ArrayReturningAPITests: XCTestCase {
    /// FIPS 180-2 appendix B.1 and C.1: the digests of "abc".
    func testDigestsOfABCMatchFIPS180() throws {
        let abc = Array("abc".utf8)
        XCTAssertEqual(Hex.encode(SHA256.hash(abc)),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(Hex.encode(SHA512.hash(abc)),
                       "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                        + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    func testUninitializedCountInitializerKeepsWhatTheBodyInitialisedAndRethrowsItsTypedError() throws {
        let filled = [UInt8](uninitializedCount: 10) { (buffer: UnsafeMutableRawBufferPointer) -> Int in
            for index in 0..<4 { buffer[index] = UInt8(index + 1) }
            return 4
        }
        XCTAssertEqual(filled, [1, 2, 3, 4], "only the bytes the body says it initialised")
        do {
            _ = try [UInt8](uninitializedCount: 8) { (_: UnsafeMutableRawBufferPointer) throws(CryptoError) -> Int in
                throw .authenticationFailure
            }
            XCTFail("expected the body's error")
        } catch {
            XCTAssertEqual(error, .authenticationFailure)
        }
    }

    func testOneShotDigestsIntoBuffersEqualTheArrayCalls() throws {
        for count in [0, 1, 64, 111, 112, 128, 1000] {
            let message = SecureRandom.bytes(count)
            var sha256 = [UInt8](repeating: 0, count: 32)
            var sha512 = [UInt8](repeating: 0, count: 64)
            try message.withUnsafeBytes { m in
                try sha256.withUnsafeMutableBytes { try SHA256.hash(bytes: m, into: $0) }
                try sha512.withUnsafeMutableBytes { try SHA512.hash(bytes: m, into: $0) }
            }
            XCTAssertEqual(sha256, SHA256.hash(message))
            XCTAssertEqual(sha512, SHA512.hash(message))
            var incremental = SHA512()
            incremental.update(message)
            XCTAssertEqual(incremental.finalize(), sha512)
        }
    }

    func testDigestIntoAShortBufferThrows() {
        var short = [UInt8](repeating: 0, count: 63)
        XCTAssertThrowsError(try short.withUnsafeMutableBytes { try SHA512.hash(bytes: UnsafeRawBufferPointer(start: nil, count: 0), into: $0) }) {
            XCTAssertEqual($0 as? CryptoError, .bufferTooSmall(required: 64, actual: 63))
        }
    }

    /// RFC 4231 test case 2.
    func testHMACMatchesRFC4231() {
        let tag = HMACSHA256.authenticationCode(for: Array("what do ya want for nothing?".utf8), using: Array("Jefe".utf8))
        XCTAssertEqual(Hex.encode(tag), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testOneShotHMACEqualsTheIncrementalStateAndLibsodium() {
        for count in [0, 1, 32, 64, 65, 200] {
            let key = SecureRandom.bytes(32), message = SecureRandom.bytes(count)
            var incremental = HMACSHA256(key: key)
            incremental.update(message)
            var expected = [UInt8](repeating: 0, count: 32)
            XCTAssertEqual(crypto_auth_hmacsha256(&expected, message, UInt64(message.count), key), 0)
            XCTAssertEqual(HMACSHA256.authenticationCode(for: message, using: key), expected)
            XCTAssertEqual(incremental.finalize(), expected)
        }
    }

    /// The GCM specification's test cases 13 and 14 (256-bit zero key, zero IV).
    func testAESGCMMatchesTheGCMSpecificationTestCases() throws {
        try XCTSkipUnless(AES256GCM.isAvailable, "AES-GCM needs AES-NI and PCLMUL")
        let key = SymmetricKey(data: [UInt8](repeating: 0, count: 32)), nonce = [UInt8](repeating: 0, count: 12)
        XCTAssertEqual(Hex.encode(try AES256GCM.seal([], using: key, nonce: nonce)), "530f8afbc74536b9a963b4f1c4cb738b")
        XCTAssertEqual(Hex.encode(try AES256GCM.seal([UInt8](repeating: 0, count: 16), using: key, nonce: nonce)),
                       "cea7403d4d606b6e074ec5d3baf39d18" + "d0d1c8a799996bf0265b98b5d48ab919")
    }

    func testAESGCMArrayCallsEqualTheBufferCallsAndRejectTampering() throws {
        try XCTSkipUnless(AES256GCM.isAvailable, "AES-GCM needs AES-NI and PCLMUL")
        for count in [0, 1, 15, 16, 64, 1024, 65536] {
            let keyBytes = SecureRandom.bytes(32), nonce = SecureRandom.bytes(12)
            let plaintext = SecureRandom.bytes(count), aad = SecureRandom.bytes(count % 41)
            let key = SymmetricKey(data: keyBytes)
            let sealed = try AES256GCM.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
            var viaBuffers = [UInt8](repeating: 0, count: count + 16)
            let written = try keyBytes.withUnsafeBytes { k in
                try plaintext.withUnsafeBytes { p in
                    try nonce.withUnsafeBytes { n in
                        try aad.withUnsafeBytes { a in
                            try viaBuffers.withUnsafeMutableBytes { try AES256GCM.seal(p, key: k, nonce: n, authenticating: a, into: $0) }
                        }
                    }
                }
            }
            XCTAssertEqual(written, count + 16)
            XCTAssertEqual(sealed, viaBuffers)
            XCTAssertEqual(try AES256GCM.open(sealed, using: key, nonce: nonce, authenticating: aad), plaintext)
            var tampered = sealed
            tampered[tampered.count - 1] ^= 1
            XCTAssertThrowsError(try AES256GCM.open(tampered, using: key, nonce: nonce, authenticating: aad)) {
                XCTAssertEqual($0 as? CryptoError, .authenticationFailure)
            }
        }
    }

    func testAESGCMArrayCallsReportBadParameters() throws {
        try XCTSkipUnless(AES256GCM.isAvailable, "AES-GCM needs AES-NI and PCLMUL")
        let key = SymmetricKey(data: SecureRandom.bytes(32))
        XCTAssertThrowsError(try AES256GCM.seal([1, 2, 3], using: key, nonce: [0])) {
            XCTAssertEqual($0 as? CryptoError, .invalidNonceLength(expected: 12, actual: 1))
        }
        XCTAssertThrowsError(try AES256GCM.open([UInt8](repeating: 0, count: 15), using: key, nonce: SecureRandom.bytes(12))) {
            XCTAssertEqual($0 as? CryptoError, .ciphertextTooShort(minimum: 16, actual: 15))
        }
        XCTAssertThrowsError(try AES256GCM.seal([1], using: SymmetricKey(data: [1, 2]), nonce: SecureRandom.bytes(12))) {
            XCTAssertEqual($0 as? CryptoError, .invalidKeyLength(expected: 32, actual: 2))
        }
    }

    func testFixedSizeArraysAreFreshAndZeroed() {
        var first = ByteArrays.zeroed32()
        first[0] = 1
        XCTAssertEqual(ByteArrays.zeroed32(), [UInt8](repeating: 0, count: 32))
        XCTAssertEqual(ByteArrays.zeroed64(), [UInt8](repeating: 0, count: 64))
        XCTAssertEqual(ByteArrays.zeroed(44), [UInt8](repeating: 0, count: 44))
        XCTAssertEqual(first[0], 1)
    }
}
