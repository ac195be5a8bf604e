import Foundation
import SignalPrimitives
import SignalVectorKit
import XCTest

/// Runs the `self-encryption` suite over TestVectors/protocol/self_encryption.json, written by
/// the independent Python reference of SPEC.md.
final class SelfEncryptionSuiteTests: XCTestCase {
    /// Every `SelfEncryption` test of the files in TestVectors/protocol (a missing
    /// folder or an empty result fails the test instead of passing it vacuously).
    private func loadTests() throws -> [[String: Any]] {
        let tests = try SessionVectorFiles.tests(ofSuite: SelfEncryptionSuite.name).map(\.fields)
        XCTAssertFalse(tests.isEmpty, "no \(SelfEncryptionSuite.name) vectors in TestVectors/protocol")
        return tests
    }

    func testEveryReferenceVectorPasses() throws {
        let passed = try SessionVectorFiles.runAll(SelfEncryptionSuite.self)
        XCTAssertGreaterThan(passed, 0)
    }

    func testCorruptedExpectedOutputsFail() throws {
        for fields in try loadTests() where fields["error"] == nil {
            var corrupted = fields
            var sealed = try XCTUnwrap(Hex.decode(try XCTUnwrap(fields["sealed"] as? String)))
            sealed[sealed.count / 2] ^= 0x01
            corrupted["sealed"] = Hex.encode(sealed)
            XCTAssertThrowsError(try SelfEncryptionSuite.run(VectorTest(corrupted)), "test \(fields["id"] ?? -1)")
        }
    }

    func testWrongExpectedErrorFails() throws {
        for fields in try loadTests() where fields["error"] != nil {
            var wrong = fields
            wrong["error"] = fields["error"] as? String == "invalidMessage" ? "invalidPadding" : "invalidMessage"
            XCTAssertThrowsError(try SelfEncryptionSuite.run(VectorTest(wrong)), "test \(fields["id"] ?? -1)")
        }
    }
}
