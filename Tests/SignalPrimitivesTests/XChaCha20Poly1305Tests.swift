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

final class AEADLengthLimitTests: XCTestCase {
    /// A plaintext longer than libsodium's AES-GCM maximum (about 64 GiB) is refused before
    /// libsodium is called: libsodium would abort the process (`sodium_misuse`), so this test
    /// finishing at all shows it was not called. The buffers claim 128 GiB over 16 real bytes;
    /// nothing reads them.
    func testAnAESGCMMessageOverLibsodiumsMaximumThrowsBeforeLibsodiumIsCalled() throws {
        try XCTSkipUnless(AES256GCM.isAvailable, "AES-256-GCM needs AES-NI and PCLMUL")
        let huge = 1 << 37
        XCTAssertGreaterThan(UInt64(huge), AES256GCM.maximumMessageByteCount)
        let storage = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        defer { storage.deallocate() }
        let claimed = UnsafeMutableRawBufferPointer(start: storage, count: huge)
        let keyStorage = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 16)
        let nonceStorage = UnsafeMutableRawBufferPointer.allocate(byteCount: 12, alignment: 16)
        defer { keyStorage.deallocate(); nonceStorage.deallocate() }
        keyStorage.initializeMemory(as: UInt8.self, repeating: 1)
        nonceStorage.initializeMemory(as: UInt8.self, repeating: 2)
        let key = UnsafeRawBufferPointer(keyStorage), nonce = UnsafeRawBufferPointer(nonceStorage)
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        XCTAssertThrowsError(try AES256GCM.seal(UnsafeRawBufferPointer(claimed), key: key, nonce: nonce, authenticating: none, into: claimed)) {
            XCTAssertEqual($0 as? CryptoError, .messageTooLong(maximum: Int(AES256GCM.maximumMessageByteCount), actual: huge))
        }
        XCTAssertThrowsError(try AES256GCM.open(UnsafeRawBufferPointer(claimed), key: key, nonce: nonce, authenticating: none, into: claimed)) {
            XCTAssertEqual($0 as? CryptoError, .messageTooLong(maximum: Int(AES256GCM.maximumMessageByteCount), actual: huge - 16))
        }
    }

    /// The shared check against a maximum of 2^31 + 5: one byte more is refused with the
    /// maximum named; at the maximum, and for anything under 2^31 (every libsodium maximum is
    /// at least that), it passes.
    func testTheLengthCheckAgainstASmallMaximum() {
        let maximum = (1 << 31) + 5
        XCTAssertThrowsError(try SodiumAEAD.checkMessageLength(maximum + 1, messageBytesMax: { maximum })) {
            XCTAssertEqual($0 as? CryptoError, .messageTooLong(maximum: maximum, actual: maximum + 1))
        }
        XCTAssertNoThrow(try SodiumAEAD.checkMessageLength(maximum, messageBytesMax: { maximum }))
        XCTAssertNoThrow(try SodiumAEAD.checkMessageLength(1 << 30, messageBytesMax: { 0 }))
    }

    /// A maximum above `Int.max` (a `size_t` read through Swift's `Int`) stays a huge limit.
    func testASizeTMaximumAboveIntMaxIsNotNegative() {
        XCTAssertEqual(SodiumAEAD.maximum(Int(bitPattern: UInt.max - 16)), UInt64(UInt.max - 16))
        XCTAssertNoThrow(try SodiumAEAD.checkMessageLength(Int.max, messageBytesMax: { Int(bitPattern: UInt.max - 16) }))
    }
}
