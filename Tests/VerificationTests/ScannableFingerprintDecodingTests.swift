import SignalPrimitives
@_spi(Testing) import Verification
import XCTest

/// Strict decoding of the scannable form (SPEC §7): only `CombinedFingerprints {1, 2, 3}` with
/// `LogicalFingerprint {1}` contents of 32 bytes, each field once, minimal varints.
final class ScannableFingerprintDecodingTests: XCTestCase {
    private let local = [UInt8](repeating: 0x11, count: 32)
    private let remote = [UInt8](repeating: 0x22, count: 32)

    private func logical(_ content: [UInt8]) -> [UInt8] { [0x0a, UInt8(content.count)] + content }
    private func field(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] { [tag, UInt8(body.count)] + body }
    private var valid: [UInt8] { [0x08, 0x01] + field(0x12, logical(local)) + field(0x1a, logical(remote)) }

    private func assertDecoding(_ bytes: [UInt8], fails expected: VerificationError,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try ScannableFingerprint(serialized: bytes), file: file, line: line) {
            XCTAssertEqual($0 as? VerificationError, expected, file: file, line: line)
        }
    }

    func testTheHandWrittenLayoutDecodes() throws {
        let decoded = try ScannableFingerprint(serialized: valid)
        XCTAssertEqual(decoded.version, 1)
        XCTAssertEqual(decoded.localFingerprint, local)
        XCTAssertEqual(decoded.remoteFingerprint, remote)
        XCTAssertEqual(decoded.serialized, valid)
    }

    func testFieldsInAnotherOrderDecodeToTheSameFingerprint() throws {
        let reordered = field(0x1a, logical(remote)) + [0x08, 0x01] + field(0x12, logical(local))
        XCTAssertEqual(try ScannableFingerprint(serialized: reordered), try ScannableFingerprint(serialized: valid))
    }

    func testEveryTruncationIsRejected() {
        for length in 0 ..< valid.count {
            XCTAssertThrowsError(try ScannableFingerprint(serialized: Array(valid.prefix(length))), "prefix \(length)")
        }
        assertDecoding(Array(valid.dropLast()), fails: .truncatedFingerprint)
        assertDecoding([], fails: .missingField(1))
    }

    func testUnknownFieldsAreRejected() {
        assertDecoding(valid + [0x20, 0x01], fails: .unknownField(tag: 0x20))              // field 4, varint
        assertDecoding(valid + field(0x22, [1, 2]), fails: .unknownField(tag: 0x22))       // field 4, bytes
        assertDecoding([0x0a, 0x01, 0x01] + Array(valid.dropFirst(2)), fails: .unknownField(tag: 0x0a)) // version as bytes
        assertDecoding([0x08, 0x01, 0x10, 0x01] + Array(valid.dropFirst(2)), fails: .unknownField(tag: 0x10)) // local as varint
        assertDecoding([0x00] + valid, fails: .unknownField(tag: 0))                       // field number 0
        let innerExtra = [0x08, 0x01] + field(0x12, logical(local) + [0x10, 0x00]) + field(0x1a, logical(remote))
        assertDecoding(innerExtra, fails: .unknownField(tag: 0x10))
    }

    func testDuplicateFieldsAreRejected() {
        assertDecoding(valid + [0x08, 0x01], fails: .duplicateField(1))
        assertDecoding(valid + field(0x12, logical(local)), fails: .duplicateField(2))
        assertDecoding(valid + field(0x1a, logical(remote)), fails: .duplicateField(3))
        let twoContents = [0x08, 0x01] + [0x12, 0x44] + logical(local) + logical(local) + field(0x1a, logical(remote))
        assertDecoding(twoContents, fails: .duplicateField(1))
    }

    func testMissingFieldsAreRejected() {
        assertDecoding(Array(valid.dropFirst(2)), fails: .missingField(1))
        assertDecoding([0x08, 0x01] + field(0x1a, logical(remote)), fails: .missingField(2))
        assertDecoding([0x08, 0x01] + field(0x12, logical(local)), fails: .missingField(3))
        assertDecoding([0x08, 0x01] + field(0x12, []) + field(0x1a, logical(remote)), fails: .missingField(1))
    }

    func testContentsOfTheWrongLengthAreRejected() {
        let short = [0x08, 0x01] + field(0x12, logical(Array(local.dropLast()))) + field(0x1a, logical(remote))
        assertDecoding(short, fails: .invalidFingerprintLength(31))
        let long = [0x08, 0x01] + field(0x12, logical(local)) + field(0x1a, logical(remote + [0]))
        assertDecoding(long, fails: .invalidFingerprintLength(33))
        let empty = [0x08, 0x01] + field(0x12, logical([])) + field(0x1a, logical(remote))
        assertDecoding(empty, fails: .invalidFingerprintLength(0))
    }

    func testLengthsBeyondTheBufferAreTruncation() {
        assertDecoding([0x08, 0x01, 0x12, 0x23] + logical(local), fails: .truncatedFingerprint)
        assertDecoding([0x08, 0x01, 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f], fails: .truncatedFingerprint)
    }

    func testMalformedVarintsAreRejected() {
        let rest = Array(valid.dropFirst(2))
        assertDecoding([0x08, 0x80], fails: .invalidVarint)                                   // truncated
        assertDecoding([0x08, 0x81, 0x00] + rest, fails: .invalidVarint)                      // non-minimal 1
        assertDecoding([0x08, 0x80, 0x80, 0x80, 0x80, 0x10] + rest, fails: .invalidVarint)    // 2^32: beyond uint32
        assertDecoding([0x08] + [UInt8](repeating: 0xff, count: 9) + [0x02] + rest, fails: .invalidVarint) // > 64 bits
        assertDecoding([0x08] + [UInt8](repeating: 0x80, count: 10) + [0x01] + rest, fails: .invalidVarint) // 11 bytes
        assertDecoding([0x88, 0x00, 0x01] + rest, fails: .invalidVarint)                      // non-minimal tag
        assertDecoding([0x08, 0x01, 0x12, 0xa2, 0x00] + logical(local) + field(0x1a, logical(remote)),
                       fails: .invalidVarint)                                                  // non-minimal length
        // The largest uint32 version is accepted.
        XCTAssertEqual(try ScannableFingerprint(serialized: [0x08, 0xff, 0xff, 0xff, 0xff, 0x0f] + rest).version, UInt32.max)
    }

    func testComparingMalformedBytesThrowsInsteadOfReportingAMismatch() throws {
        let ours = try ScannableFingerprint(version: 1, localFingerprint: remote, remoteFingerprint: local)
        XCTAssertEqual(try ours.compare(serialized: valid), .match)
        XCTAssertThrowsError(try ours.compare(serialized: valid + [0x20, 0x01]))
        XCTAssertThrowsError(try ours.compare(serialized: Array(valid.dropLast())))
    }
}
