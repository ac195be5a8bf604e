import Foundation
import SignalPrimitives
import SignalVectorKit
import XCTest

/// Runs the `self-encryption` suite over TestVectors/protocol/self_encryption.json, written by
/// the independent Python reference of SPEC.md.
final class SelfEncryptionSuiteTests: XCTestCase {
    private func loadTests() throws -> [[String: Any]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../TestVectors/protocol/self_encryption.json").standardizedFileURL
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("no vector file at \(url.path)")
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        let file = try XCTUnwrap(object as? [String: Any])
        XCTAssertEqual(file["schema"] as? String, "sessionkit-vectors/1")
        XCTAssertEqual(file["suite"] as? String, SelfEncryptionSuite.name)
        return try XCTUnwrap(file["tests"] as? [[String: Any]])
    }

    func testEveryReferenceVectorPasses() throws {
        let tests = try loadTests()
        XCTAssertFalse(tests.isEmpty)
        var passed = 0
        for fields in tests {
            let test = VectorTest(fields)
            do {
                let outcome = try SelfEncryptionSuite.run(test)
                XCTAssertEqual(outcome, .passed)
                if outcome == .passed { passed += 1 }
            } catch {
                XCTFail("test \(test.id) (\(fields["comment"] ?? "")): \(error)")
            }
        }
        XCTAssertEqual(passed, tests.count)
        print("self-encryption: \(passed) of \(tests.count) reference vectors passed")
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
