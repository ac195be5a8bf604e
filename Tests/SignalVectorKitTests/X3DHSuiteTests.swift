import Foundation
import SignalVectorKit
import XCTest

/// Runs the `x3dh` suite on TestVectors/protocol/x3dh.json and checks that corrupted copies
/// of its tests fail.
final class X3DHSuiteTests: XCTestCase {
    func testEveryX3DHVectorPasses() throws {
        let passed = try SessionVectorFiles.runAll(X3DHSuite.self)
        print("x3dh: \(passed) vectors passed")
    }

    func testTheSuiteIsRegistered() {
        XCTAssertTrue(SuiteRegistry.suites[X3DHSuite.name] == X3DHSuite.self)
    }

    /// SPEC §9: Alice's registration id is part of P, so removing or changing it changes P and
    /// SK, and the runner refuses the test.
    func testTheRegistrationIDIsBoundIntoTheSharedSecret() throws {
        let withID = try SessionVectorFiles.tests(ofSuite: X3DHSuite.name).map(\.fields)
            .filter { $0["error"] == nil && $0["registration_id"] is Int }
        XCTAssertGreaterThan(withID.count, 10)
        for fields in withID {
            for replacement: Any in [NSNull(), ((fields["registration_id"] as? Int ?? 1) % 0x7FFF_FFFF) + 1] {
                var changed = fields
                changed["registration_id"] = replacement
                XCTAssertThrowsError(try X3DHSuite.run(VectorTest(changed)), "test \(fields["id"] ?? "?")")
                // With the expected prefix restated the secret still differs: the id is in SK.
                if let prefix = fields["prefix"] as? String, replacement is Int {
                    changed["prefix"] = String(prefix.dropLast(8)) + String(format: "%08x", replacement as? Int ?? 0)
                    XCTAssertThrowsError(try X3DHSuite.run(VectorTest(changed)), "test \(fields["id"] ?? "?") restated prefix") {
                        XCTAssertTrue("\($0)".contains("shared_secret"), "\($0)")
                    }
                }
            }
        }
    }

    func testCorruptedX3DHVectorsFail() throws {
        for (_, fields) in try SessionVectorFiles.tests(ofSuite: X3DHSuite.name) {
            if let error = fields["error"] as? String {
                var wrongName = fields
                wrongName["error"] = error == "invalidSignature" ? "invalidKey" : "invalidSignature"
                XCTAssertThrowsError(try X3DHSuite.run(VectorTest(wrongName)), "test \(fields["id"] ?? "?")")
                continue
            }
            for key in ["shared_secret", "associated_data", "prefix"] {
                var corrupted = fields
                corrupted[key] = SessionVectorFiles.flipLastDigit(fields[key] as? String ?? "")
                XCTAssertThrowsError(try X3DHSuite.run(VectorTest(corrupted)), "test \(fields["id"] ?? "?") \(key)")
            }
            if var encapsulation = fields["kem_encapsulation"] as? [String: Any] {
                // A KEM secret that is not what the ciphertext decapsulates to must fail.
                encapsulation["shared_secret"] = SessionVectorFiles.flipLastDigit(encapsulation["shared_secret"] as? String ?? "")
                var corrupted = fields
                corrupted["kem_encapsulation"] = encapsulation
                XCTAssertThrowsError(try X3DHSuite.run(VectorTest(corrupted)), "test \(fields["id"] ?? "?") KEM secret")
                var stripped = fields
                stripped["kem_encapsulation"] = NSNull()
                XCTAssertThrowsError(try X3DHSuite.run(VectorTest(stripped)), "test \(fields["id"] ?? "?") KEM stripped")
            }
            var wrongOPK = fields
            wrongOPK["bob_opk_sk"] = fields["bob_opk_sk"] is String ? NSNull() : String(repeating: "11", count: 32)
            XCTAssertThrowsError(try X3DHSuite.run(VectorTest(wrongOPK)), "test \(fields["id"] ?? "?") OPK")
        }
    }
}
