@testable import SignalPrimitives
import XCTest

final class ScryptTests: XCTestCase {
    private func derive(_ password: String, _ salt: String, logN: Int, r: Int, p: Int, count: Int) throws(CryptoError) -> [UInt8] {
        let key = try Array(password.utf8).withBytes { (pw: UnsafeRawBufferPointer) throws(CryptoError) in
            try Scrypt.deriveKey(password: pw, salt: Array(salt.utf8), logN: logN, r: r, p: p, outputByteCount: count)
        }
        return key.storage.bytes
    }

    /// RFC 7914 §12, the first two test vectors (the third and fourth need 16 MiB and 1 GiB).
    func testRFC7914KnownAnswers() throws {
        XCTAssertEqual(try derive("", "", logN: 4, r: 1, p: 1, count: 64), bytes(
            "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"))
        XCTAssertEqual(try derive("password", "NaCl", logN: 10, r: 8, p: 16, count: 64), bytes(
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"))
    }

    /// RFC 7914 §12, the third vector (N = 16384: 16 MiB).
    func testRFC7914ThirdVector() throws {
        XCTAssertEqual(try derive("pleaseletmein", "SodiumChloride", logN: 14, r: 8, p: 1, count: 64), bytes(
            "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"))
    }

    func testParametersOutsideTheDomainAreTypedErrors() {
        for (logN, r, p) in [(0, 8, 1), (64, 8, 1), (-1, 8, 1), (10, 0, 1), (10, 8, 0), (10, 1 << 15, 1 << 15), (60, 1 << 20, 1)] {
            assertThrows(.keyDerivationFailed) { () throws(CryptoError) in try derive("pw", "salt", logN: logN, r: r, p: p, count: 32) }
        }
        assertThrows(.invalidOutputLength(requested: 0, maximum: Int(clamping: Scrypt.maximumOutputByteCount))) {
            () throws(CryptoError) in try derive("pw", "salt", logN: 4, r: 1, p: 1, count: 0)
        }
    }

    func testMemoryByteCount() {
        XCTAssertEqual(Scrypt.memoryByteCount(logN: 18, r: 8), 256 << 20)
        XCTAssertEqual(Scrypt.memoryByteCount(logN: 22, r: 8), 4 << 30)
        XCTAssertEqual(Scrypt.memoryByteCount(logN: 53, r: 8), 1 << 63)
        XCTAssertNil(Scrypt.memoryByteCount(logN: 54, r: 8))
        XCTAssertNil(Scrypt.memoryByteCount(logN: 0, r: 8))
    }
}
