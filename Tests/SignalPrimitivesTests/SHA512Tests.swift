import SignalPrimitives
import XCTest

final class SHA512Tests: XCTestCase {
    /// FIPS 180-4 example value (NIST CSRC "SHA512.pdf") for "abc".
    func testFIPS180Example() {
        XCTAssertEqual(Hex.encode(SHA512.hash(Array("abc".utf8))),
                       "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                       + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    func testIncrementalAndBufferVariantsEqualTheOneShotDigest() throws {
        let data = counting(500, from: 9)
        var hash = SHA512()
        hash.update(Array(data[..<128]))
        hash.update(Array(data[128...]))
        var out = [UInt8](repeating: 0, count: 64)
        try out.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) throws in
            try hash.finalize(into: buffer)
        }
        XCTAssertEqual(out, SHA512.hash(data))
    }

    func testFinalizeIntoAShortBufferThrows() {
        var hash = SHA512()
        var short = [UInt8](repeating: 0, count: 63)
        short.withUnsafeMutableBytes { out in
            assertThrows(.bufferTooSmall(required: 64, actual: 63)) { () throws(CryptoError) in try hash.finalize(into: out) }
        }
    }
}
