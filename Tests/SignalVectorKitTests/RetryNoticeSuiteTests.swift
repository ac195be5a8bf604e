import Foundation
import SignalVectorKit
import XCTest

/// Runs the `retry-notice` suite (SPEC §9) on TestVectors/protocol/retry_notice.json (written by
/// the independent Python generator) and checks that corrupted copies of its tests fail.
final class RetryNoticeSuiteTests: XCTestCase {
    private func loadTests() throws -> [[String: Any]] {
        let tests = try SessionVectorFiles.tests(ofSuite: RetryNoticeSuite.name).map(\.fields)
        XCTAssertFalse(tests.isEmpty, "no \(RetryNoticeSuite.name) vectors in TestVectors/protocol")
        return tests
    }

    func testEveryVectorPasses() throws {
        let passed = try SessionVectorFiles.runAll(RetryNoticeSuite.self)
        XCTAssertGreaterThan(passed, 100)
    }

    func testTheSuiteIsRegistered() {
        XCTAssertTrue(SuiteRegistry.suites[RetryNoticeSuite.name] == RetryNoticeSuite.self)
    }

    /// Both kinds succeed, and every error of §9's checks occurs.
    func testTheVectorsCoverBothKindsAndEveryError() throws {
        let tests = try loadTests()
        let kinds = Set(tests.filter { $0["error"] == nil }.compactMap { $0["kind"] as? Int })
        XCTAssertEqual(kinds, [1, 2])
        let errors = Set(tests.compactMap { $0["error"] as? String })
        XCTAssertEqual(errors, ["invalidMessage", "unsupportedVersion", "invalidKey", "untrustedIdentity"])
    }

    func testCorruptedTestsFail() throws {
        for fields in try loadTests() {
            let id = fields["id"] ?? "?"
            if let error = fields["error"] as? String {
                var wrongName = fields
                wrongName["error"] = error == "invalidMessage" ? "invalidKey" : "invalidMessage"
                XCTAssertThrowsError(try RetryNoticeSuite.run(VectorTest(wrongName)), "test \(id)")
                continue
            }
            // Encoding is compared exactly, and A checks the MAC: any changed digit fails.
            var changed = fields
            changed["notice"] = SessionVectorFiles.flipLastDigit(fields["notice"] as? String ?? "")
            XCTAssertThrowsError(try RetryNoticeSuite.run(VectorTest(changed)), "test \(id) notice")
            // Another registration id, counter or iteration encodes to other bytes.
            var otherID = fields
            otherID["registration_id"] = ((fields["registration_id"] as? Int ?? 1) % 0x7FFF_FFFF) + 1
            XCTAssertThrowsError(try RetryNoticeSuite.run(VectorTest(otherID)), "test \(id) registration id")
            for key in ["n", "iteration"] where fields[key] is Int {
                var otherCounter = fields
                otherCounter[key] = (fields[key] as? Int ?? 0) ^ 1
                XCTAssertThrowsError(try RetryNoticeSuite.run(VectorTest(otherCounter)), "test \(id) \(key)")
            }
            // A trust record with another key is the untrusted-identity outcome.
            var distrusted = fields
            distrusted["trusted_key"] = String(repeating: "ab", count: 32)
            XCTAssertThrowsError(try RetryNoticeSuite.run(VectorTest(distrusted)), "test \(id) trusted key")
            // A's own address or the address it came from, changed, fails the address check.
            for key in ["from_address", "to_address"] {
                var moved = fields
                var address = fields[key] as? [String: Any] ?? [:]
                address["device_id"] = ((address["device_id"] as? Int ?? 0) ^ 1)
                moved[key] = address
                XCTAssertThrowsError(try RetryNoticeSuite.run(VectorTest(moved)), "test \(id) \(key)")
            }
        }
    }
}
