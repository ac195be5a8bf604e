@testable import SignalPrimitives
import XCTest

final class XChaCha20Poly1305Tests: XCTestCase {
    /// draft-irtf-cfrg-xchacha-03 §A.3.1 (AEAD_XChaCha20_Poly1305 test vector).
    func testDraftKnownAnswer() throws {
        let plaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let aad = try XCTUnwrap(Hex.decode("50515253c0c1c2c3c4c5c6c7"))
        let key = SymmetricKey(data: try XCTUnwrap(Hex.decode("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")))
        let nonce = try XCTUnwrap(Hex.decode("404142434445464748494a4b4c4d4e4f5051525354555657"))
        let expected = try XCTUnwrap(Hex.decode(
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52e"
                + "c0875924c1c7987947deafd8780acf49"))
        let sealed = try XChaCha20Poly1305.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
        XCTAssertEqual(sealed, expected)
        XCTAssertEqual(try XChaCha20Poly1305.open(sealed, using: key, nonce: nonce, authenticating: aad), plaintext)
    }

    func testAnyChangedByteFailsAuthentication() throws {
        let key = SymmetricKey(data: SecureRandom.bytes(32))
        let nonce = SecureRandom.bytes(24)
        let aad = SecureRandom.bytes(7)
        let sealed = try XChaCha20Poly1305.seal(SecureRandom.bytes(40), using: key, nonce: nonce, authenticating: aad)
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            XCTAssertThrowsError(try XChaCha20Poly1305.open(tampered, using: key, nonce: nonce, authenticating: aad)) {
                XCTAssertEqual($0 as? CryptoError, .authenticationFailure)
            }
        }
        XCTAssertThrowsError(try XChaCha20Poly1305.open(sealed, using: key, nonce: nonce, authenticating: aad + [0])) {
            XCTAssertEqual($0 as? CryptoError, .authenticationFailure)
        }
    }

    func testWrongLengthsAreTypedErrors() {
        let key = SymmetricKey(data: SecureRandom.bytes(32))
        XCTAssertThrowsError(try XChaCha20Poly1305.seal([1], using: SymmetricKey(data: SecureRandom.bytes(31)), nonce: SecureRandom.bytes(24))) {
            XCTAssertEqual($0 as? CryptoError, .invalidKeyLength(expected: 32, actual: 31))
        }
        for nonceCount in [0, 8, 12, 23, 25, 32] {
            XCTAssertThrowsError(try XChaCha20Poly1305.seal([1], using: key, nonce: SecureRandom.bytes(nonceCount))) {
                XCTAssertEqual($0 as? CryptoError, .invalidNonceLength(expected: 24, actual: nonceCount))
            }
        }
        XCTAssertThrowsError(try XChaCha20Poly1305.open(SecureRandom.bytes(15), using: key, nonce: SecureRandom.bytes(24))) {
            XCTAssertEqual($0 as? CryptoError, .ciphertextTooShort(minimum: 16, actual: 15))
        }
    }

    /// libsodium's maximum is a `size_t` above `Int.max` here; it must be read as unsigned.
    func testMaximumMessageLengthIsReadAsUnsigned() {
        XCTAssertGreaterThan(XChaCha20Poly1305.maximumMessageByteCount, UInt64(UInt32.max))
        XCTAssertGreaterThan(AES256GCM.maximumMessageByteCount, UInt64(UInt32.max))
        XCTAssertLessThan(AES256GCM.maximumMessageByteCount, UInt64(1) << 40)   // about 64 GiB
    }
}

/// An AEAD shaped like libsodium's whose "C functions" only count their calls, with a
/// maximum message length of 10 bytes: a message over the limit must be refused before either
/// is reached (libsodium would abort the process).
private enum CountingAEAD: SodiumAEADAlgorithm {
    nonisolated(unsafe) static var encryptCalls = 0
    nonisolated(unsafe) static var decryptCalls = 0
    nonisolated(unsafe) static var maximum = 10
    static let keyByteCount = 32
    static let nonceByteCount = 24
    static let tagByteCount = 16
    static func messageBytesMax() -> Int { maximum }
    static func encrypt(
        _ c: UnsafeMutablePointer<UInt8>, _ clen: UnsafeMutablePointer<UInt64>?, _ m: UnsafePointer<UInt8>, _ mlen: UInt64,
        _ ad: UnsafePointer<UInt8>, _ adlen: UInt64, _ npub: UnsafePointer<UInt8>, _ k: UnsafePointer<UInt8>
    ) -> Int32 {
        encryptCalls += 1
        return 0
    }
    static func decrypt(
        _ m: UnsafeMutablePointer<UInt8>, _ mlen: UnsafeMutablePointer<UInt64>?, _ c: UnsafePointer<UInt8>, _ clen: UInt64,
        _ ad: UnsafePointer<UInt8>, _ adlen: UInt64, _ npub: UnsafePointer<UInt8>, _ k: UnsafePointer<UInt8>
    ) -> Int32 {
        decryptCalls += 1
        return 0
    }
}

final class AEADLengthLimitTests: XCTestCase {
    func testAMessageOverTheLimitIsRefusedBeforeLibsodiumIsCalled() {
        CountingAEAD.maximum = 10
        CountingAEAD.encryptCalls = 0
        CountingAEAD.decryptCalls = 0
        let key = SymmetricKey(data: SecureRandom.bytes(32))
        let nonce = SecureRandom.bytes(24)
        XCTAssertThrowsError(try SodiumAEAD<CountingAEAD>.seal(SecureRandom.bytes(11), key: key, nonce: nonce, authenticating: [])) {
            XCTAssertEqual($0 as? CryptoError, .messageTooLong(maximum: 10, actual: 11))
        }
        XCTAssertThrowsError(try SodiumAEAD<CountingAEAD>.open(SecureRandom.bytes(27), key: key, nonce: nonce, authenticating: [])) {
            XCTAssertEqual($0 as? CryptoError, .messageTooLong(maximum: 10, actual: 11))
        }
        XCTAssertEqual(CountingAEAD.encryptCalls, 0)
        XCTAssertEqual(CountingAEAD.decryptCalls, 0)
        // At the limit both calls go through.
        XCTAssertNoThrow(try SodiumAEAD<CountingAEAD>.seal(SecureRandom.bytes(10), key: key, nonce: nonce, authenticating: []))
        XCTAssertNoThrow(try SodiumAEAD<CountingAEAD>.open(SecureRandom.bytes(26), key: key, nonce: nonce, authenticating: []))
        XCTAssertEqual(CountingAEAD.encryptCalls, 1)
        XCTAssertEqual(CountingAEAD.decryptCalls, 1)
    }

    /// A maximum above `Int.max` (a `size_t` read through Swift's `Int`) stays a huge limit.
    func testASizeTMaximumAboveIntMaxIsNotNegative() {
        CountingAEAD.maximum = Int(bitPattern: UInt.max - 16)
        defer { CountingAEAD.maximum = 10 }
        XCTAssertEqual(SodiumAEAD<CountingAEAD>.maximumMessageByteCount, UInt64(UInt.max - 16))
        XCTAssertEqual(SodiumAEAD<CountingAEAD>.reportedMaximum, Int.max)
    }
}
