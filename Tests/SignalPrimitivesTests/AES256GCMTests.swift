import SignalPrimitives
import XCTest

final class AES256GCMTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipUnless(AES256GCM.isAvailable, "this CPU lacks AES-NI or PCLMUL, so libsodium offers no AES-256-GCM")
    }

    private func sealIntoBuffer(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8], capacity: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0xee, count: capacity)
        let written = try plaintext.withUnsafeBytes { (p: UnsafeRawBufferPointer) throws -> Int in
            try key.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws -> Int in
                try nonce.withUnsafeBytes { (n: UnsafeRawBufferPointer) throws -> Int in
                    try aad.withUnsafeBytes { (a: UnsafeRawBufferPointer) throws -> Int in
                        try out.withUnsafeMutableBytes { (o: UnsafeMutableRawBufferPointer) throws -> Int in
                            try AES256GCM.seal(p, key: k, nonce: n, authenticating: a, into: o)
                        }
                    }
                }
            }
        }
        return Array(out.prefix(written))
    }

    private func openIntoBuffer(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8], output: inout [UInt8]) throws -> Int {
        try sealed.withUnsafeBytes { (c: UnsafeRawBufferPointer) throws -> Int in
            try key.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws -> Int in
                try nonce.withUnsafeBytes { (n: UnsafeRawBufferPointer) throws -> Int in
                    try aad.withUnsafeBytes { (a: UnsafeRawBufferPointer) throws -> Int in
                        try output.withUnsafeMutableBytes { (o: UnsafeMutableRawBufferPointer) throws -> Int in
                            try AES256GCM.open(c, key: k, nonce: n, authenticating: a, into: o)
                        }
                    }
                }
            }
        }
    }

    func testCallerBufferVariantsAgreeWithTheArrayVariants() throws {
        for length in [0, 1, 15, 16, 17, 64, 1000] {
            let keyBytes = SecureRandom.bytes(32)
            let key = SymmetricKey(data: keyBytes)
            let nonce = SecureRandom.bytes(12)
            let aad = SecureRandom.bytes(length % 40)
            let plaintext = SecureRandom.bytes(length)

            let sealed = try AES256GCM.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
            XCTAssertEqual(sealed.count, length + 16)
            XCTAssertEqual(try sealIntoBuffer(plaintext, key: keyBytes, nonce: nonce, aad: aad, capacity: length + 16), sealed)
            XCTAssertEqual(try sealIntoBuffer(plaintext, key: keyBytes, nonce: nonce, aad: aad, capacity: length + 100), sealed)

            XCTAssertEqual(try AES256GCM.open(sealed, using: key, nonce: nonce, authenticating: aad), plaintext)
            var output = [UInt8](repeating: 0, count: length + 3)
            let count = try openIntoBuffer(sealed, key: keyBytes, nonce: nonce, aad: aad, output: &output)
            XCTAssertEqual(count, length)
            XCTAssertEqual(Array(output.prefix(count)), plaintext)
        }
    }

    func testAnyChangedByteFailsAuthenticationAndReleasesNoPlaintext() throws {
        let keyBytes = SecureRandom.bytes(32)
        let key = SymmetricKey(data: keyBytes)
        let nonce = SecureRandom.bytes(12)
        let aad = counting(5)
        let plaintext = counting(40, from: 0x61)
        let sealed = try AES256GCM.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
        for index in [0, 20, sealed.count - 16, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 1
            assertThrows(.authenticationFailure) { () throws(CryptoError) in
                try AES256GCM.open(tampered, using: key, nonce: nonce, authenticating: aad)
            }
            var output = [UInt8](repeating: 0xee, count: plaintext.count)
            assertThrowsThroughBuffers(.authenticationFailure) {
                try openIntoBuffer(tampered, key: keyBytes, nonce: nonce, aad: aad, output: &output)
            }
            XCTAssertEqual(output, [UInt8](repeating: 0, count: plaintext.count),
                           "no unauthenticated plaintext in the caller's buffer: it is wiped")
        }
        assertThrows(.authenticationFailure) { () throws(CryptoError) in
            try AES256GCM.open(sealed, using: key, nonce: nonce, authenticating: aad + [0])
        }
    }

    func testEveryEntryPointValidatesLengths() throws {
        let nonce = counting(12)
        for count in [0, 16, 31, 33] {
            assertThrows(.invalidKeyLength(expected: 32, actual: count)) { () throws(CryptoError) in
                try AES256GCM.seal([1], using: SymmetricKey(data: counting(count)), nonce: nonce)
            }
            assertThrows(.invalidKeyLength(expected: 32, actual: count)) { () throws(CryptoError) in
                try AES256GCM.open(counting(16), using: SymmetricKey(data: counting(count)), nonce: nonce)
            }
        }
        let key = SymmetricKey(data: counting(32))
        for count in [0, 8, 11, 13, 16] {
            assertThrows(.invalidNonceLength(expected: 12, actual: count)) { () throws(CryptoError) in
                try AES256GCM.seal([1], using: key, nonce: counting(count))
            }
            assertThrows(.invalidNonceLength(expected: 12, actual: count)) { () throws(CryptoError) in
                try AES256GCM.open(counting(16), using: key, nonce: counting(count))
            }
        }
        for count in [0, 15] {
            assertThrows(.ciphertextTooShort(minimum: 16, actual: count)) { () throws(CryptoError) in
                try AES256GCM.open(counting(count), using: key, nonce: nonce)
            }
        }
        assertThrowsThroughBuffers(.bufferTooSmall(required: 26, actual: 25)) {
            try sealIntoBuffer(counting(10), key: counting(32), nonce: nonce, aad: [], capacity: 25)
        }
        let sealed = try AES256GCM.seal(counting(10), using: key, nonce: nonce)
        var small = [UInt8](repeating: 0, count: 9)
        assertThrowsThroughBuffers(.bufferTooSmall(required: 10, actual: 9)) {
            try openIntoBuffer(sealed, key: counting(32), nonce: nonce, aad: [], output: &small)
        }
    }
}
