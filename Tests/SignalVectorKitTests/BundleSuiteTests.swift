import Foundation
import SignalPrimitives
import SignalVectorKit
import XCTest

/// Runs the `bundle` suite on TestVectors/protocol/bundle.json (the independent generator's)
/// and checks that corrupted copies of its tests fail.
final class BundleSuiteTests: XCTestCase {
    func testEveryBundleVectorPasses() throws {
        let passed = try SessionVectorFiles.runAll(BundleSuite.self)
        XCTAssertGreaterThan(passed, 100)
    }

    func testTheSuiteIsRegistered() {
        XCTAssertTrue(SuiteRegistry.suites[BundleSuite.name] == BundleSuite.self)
    }

    /// The vectors cover every combination of one-time and KEM prekeys, and each error name.
    func testTheVectorsCoverEveryCombinationAndError() throws {
        let tests = try SessionVectorFiles.tests(ofSuite: BundleSuite.name).map(\.fields)
        let successes = tests.filter { $0["error"] == nil }
        for (opk, kem) in [(false, false), (true, false), (false, true), (true, true)] {
            XCTAssertTrue(successes.contains { ($0["opk_sk"] is String) == opk && ($0["kem_seed"] is String) == kem },
                          "no success test with opk \(opk), kem \(kem)")
        }
        let errors = Set(tests.compactMap { $0["error"] as? String })
        XCTAssertEqual(errors, ["invalidPayload", "unsupportedVersion", "invalidSignature", "invalidKey"])
    }

    /// SPEC §9: tests with a registration id exist in every shape, at both ends of the range,
    /// and bundles with an id out of range are errors.
    func testTheVectorsCoverRegistrationIDs() throws {
        let tests = try SessionVectorFiles.tests(ofSuite: BundleSuite.name).map(\.fields)
        let withID = tests.filter { $0["error"] == nil && $0["registration_id"] is Int }
        let ids = Set(withID.compactMap { $0["registration_id"] as? Int })
        XCTAssertTrue(ids.contains(1) && ids.contains(0x7FFF_FFFF), "ids \(ids.sorted())")
        for (opk, kem) in [(false, false), (true, false), (false, true), (true, true)] {
            XCTAssertTrue(withID.contains { ($0["opk_sk"] is String) == opk && ($0["kem_seed"] is String) == kem },
                          "no test with a registration id, opk \(opk), kem \(kem)")
        }
        // A success test without its id (or with another) encodes to other bytes.
        for fields in withID {
            for replacement: Any in [NSNull(), ((fields["registration_id"] as? Int ?? 1) % 0x7FFF_FFFF) + 1] {
                var changed = fields
                changed["registration_id"] = replacement
                XCTAssertThrowsError(try BundleSuite.run(VectorTest(changed)), "test \(fields["id"] ?? "?")")
            }
        }
    }

    func testCorruptedBundleVectorsFail() throws {
        for (_, fields) in try SessionVectorFiles.tests(ofSuite: BundleSuite.name) {
            let id = fields["id"] ?? "?"
            if let error = fields["error"] as? String {
                var wrongName = fields
                wrongName["error"] = error == "invalidSignature" ? "invalidKey" : "invalidSignature"
                XCTAssertThrowsError(try BundleSuite.run(VectorTest(wrongName)), "test \(id)")
                continue
            }
            // Any changed byte of the expected encoding must fail (encode is compared exactly).
            var changed = fields
            changed["bundle"] = SessionVectorFiles.flipLastDigit(fields["bundle"] as? String ?? "")
            XCTAssertThrowsError(try BundleSuite.run(VectorTest(changed)), "test \(id) bundle")
            // A bundle built with the other kem bit signs other bytes.
            if fields["kem_seed"] is String {
                var classic = fields
                classic["kem_seed"] = NSNull()
                XCTAssertThrowsError(try BundleSuite.run(VectorTest(classic)), "test \(id) without KEM")
            }
        }
    }
}
