import SignalPrimitives
import XCTest

final class SHA256Tests: XCTestCase {
    /// FIPS 180-4 example values (NIST CSRC "SHA256.pdf"): "abc" and the 448-bit message.
    func testFIPS180Examples() {
        XCTAssertEqual(Hex.encode(SHA256.hash(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(Hex.encode(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(Hex.encode(SHA256.hash([])),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    func testIncrementalAndBufferVariantsEqualTheOneShotDigest() throws {
        let data = counting(1000)
        var hash = SHA256()
        hash.update(Array(data[..<333]))
        hash.update(Array(data[333...]))
        var out = [UInt8](repeating: 0, count: 32)
        try out.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) throws in
            try hash.finalize(into: buffer)
        }
        XCTAssertEqual(out, SHA256.hash(data))
    }

    func testFinalizeIntoAShortBufferThrows() {
        var hash = SHA256()
        var short = [UInt8](repeating: 0, count: 31)
        short.withUnsafeMutableBytes { out in
            assertThrows(.bufferTooSmall(required: 32, actual: 31)) { () throws(CryptoError) in try hash.finalize(into: out) }
        }
    }
}
