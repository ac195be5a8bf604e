import SignalPrimitives
import XCTest

final class HKDFTests: XCTestCase {
    func testRFC5869VectorsThroughEveryEntryPoint() throws {
        let cases = try RFCVectors.cases("hkdf_rfc5869.json")
        XCTAssertEqual(cases.count, 3)
        for vector in cases {
            let ikm = try vector.hex("ikm")
            let salt = try vector.hex("salt")
            let info = try vector.hex("info")
            let okm = try vector.hex("okm")
            let size = try XCTUnwrap(vector.test["size"] as? Int)
            XCTAssertEqual(okm.count, size)

            XCTAssertEqual(try HKDF.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: size), okm, vector.comment)
            let prk = HKDF.extract(salt: salt, inputKeyMaterial: ikm)
            XCTAssertEqual(try HKDF.expand(pseudoRandomKey: prk, info: info, outputByteCount: size), okm, vector.comment)
            let extractor = HKDF.Extractor(salt: salt)
            XCTAssertEqual(extractor.extract(inputKeyMaterial: ikm), prk)
            XCTAssertEqual(try extractor.deriveKey(inputKeyMaterial: ikm, info: info, outputByteCount: size), okm, vector.comment)

            var buffer = [UInt8](repeating: 0, count: size)
            try ikm.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws in
                try info.withUnsafeBytes { (i: UnsafeRawBufferPointer) throws in
                    try buffer.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) throws in
                        try extractor.deriveKey(inputKeyMaterial: k, info: i, into: out)
                    }
                }
            }
            XCTAssertEqual(buffer, okm, vector.comment)

            let secretOKM = try HKDF.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: salt, info: info, outputByteCount: size)
            XCTAssertEqual(secretOKM.storage.bytes, okm, vector.comment)
        }
    }

    /// An absurd length from a caller (or a vector file) is refused before anything is
    /// allocated: asking for 10^11 bytes must throw, not trap in the allocator.
    func testHugeOutputLengthsThrowBeforeAllocating() {
        let huge = 100_000_000_000
        assertThrows(.invalidOutputLength(requested: huge, maximum: 8160)) { () throws(CryptoError) in
            _ = try HKDF.deriveKey(inputKeyMaterial: [1], salt: [], info: [], outputByteCount: huge)
        }
        assertThrows(.invalidOutputLength(requested: huge, maximum: 8160)) { () throws(CryptoError) in
            _ = try HKDF.expand(pseudoRandomKey: SymmetricKey(data: counting(32)), info: [], outputByteCount: huge)
        }
        assertThrows(.invalidOutputLength(requested: huge, maximum: 8160)) { () throws(CryptoError) in
            _ = try HKDF.deriveKey(inputKeyMaterial: SymmetricKey(data: [1]), salt: [], info: [], outputByteCount: huge)
        }
    }

    func testEmptySaltMeans32ZeroBytes() throws {
        let ikm = counting(22)
        XCTAssertEqual(try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [], info: [1], outputByteCount: 32),
                       try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](repeating: 0, count: 32), info: [1], outputByteCount: 32))
    }

    func testOutputLengthIsLimitedTo255Blocks() throws {
        XCTAssertEqual(try HKDF.deriveKey(inputKeyMaterial: [1], salt: [], info: [], outputByteCount: 8160).count, 8160)
        XCTAssertEqual(try HKDF.deriveKey(inputKeyMaterial: [1], salt: [], info: [], outputByteCount: 0), [])
        for bad in [8161, 100_000] {
            assertThrows(.invalidOutputLength(requested: bad, maximum: 8160)) { () throws(CryptoError) in
                try HKDF.deriveKey(inputKeyMaterial: [1], salt: [], info: [], outputByteCount: bad)
            }
            assertThrows(.invalidOutputLength(requested: bad, maximum: 8160)) { () throws(CryptoError) in
                try HKDF.expand(pseudoRandomKey: SymmetricKey(data: counting(32)), info: [], outputByteCount: bad)
            }
            var buffer = [UInt8](repeating: 0, count: bad)
            buffer.withUnsafeMutableBytes { out in
                [UInt8](repeating: 1, count: 32).withUnsafeBytes { prk in
                    assertThrows(.invalidOutputLength(requested: bad, maximum: 8160)) { () throws(CryptoError) in
                        try HKDF.expand(pseudoRandomKey: prk, info: UnsafeRawBufferPointer(start: nil, count: 0), into: out)
                    }
                }
            }
        }
        assertThrows(.invalidOutputLength(requested: -1, maximum: 8160)) { () throws(CryptoError) in
            try HKDF.deriveKey(inputKeyMaterial: [1], salt: [], info: [], outputByteCount: -1)
        }
        assertThrows(.invalidOutputLength(requested: -1, maximum: 8160)) { () throws(CryptoError) in
            try HKDF.Extractor(salt: []).deriveKey(inputKeyMaterial: [1], info: [], outputByteCount: -1)
        }
    }
}
