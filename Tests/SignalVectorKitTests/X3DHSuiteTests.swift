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
