import Foundation
import SignalVectorKit
import XCTest

/// The `attachment` runner (SPEC §8/§10) on hand-made files: it passes the generator's tests
/// and notices a wrong output, a wrong expected error and malformed operations.
final class AttachmentSuiteTests: XCTestCase {
    private func tests() throws -> [[String: Any]] {
        let url = URL(fileURLWithPath: try PackageLocations.vectorPath("protocol/attachment.json"))
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return try XCTUnwrap(object["tests"] as? [[String: Any]])
    }

    private func run(_ tests: [[String: Any]]) throws -> VectorFileResult {
        let file: [String: Any] = ["schema": "sessionkit-vectors/2", "suite": "attachment", "source": "hand-made", "tests": tests]
        return ConformanceRunner().verify(data: try JSONSerialization.data(withJSONObject: file), path: "attachment.json")
    }

    func testValidTestsPassAndAChangedOutputFails() throws {
        let all = try tests()
        let valid = try XCTUnwrap(all.first { $0["error"] == nil && ($0["content"] as? String)?.isEmpty == false })
        XCTAssertEqual(try run([valid]).passed, 1)
        for key in ["ciphertext_sha256", "pointer"] {
            var changed = valid
            let text = try XCTUnwrap(changed[key] as? String)
            changed[key] = String(text.dropLast()) + (text.last == "0" ? "1" : "0")
            XCTAssertEqual(try run([changed]).failed, 1, key)
        }
        var padded = valid
        padded["padded_length"] = (valid["padded_length"] as? Int ?? 0) + 1
        XCTAssertEqual(try run([padded]).failed, 1)
        var content = valid
        content["content"] = "00" + (valid["content"] as? String ?? "")
        XCTAssertEqual(try run([content]).failed, 1)
    }

    func testErrorTestsAndTheirOperations() throws {
        let all = try tests()
        let byID = Dictionary(all.compactMap { test in (test["id"] as? Int).map { ($0, test) } }, uniquingKeysWith: { a, _ in a })
        let operation = try XCTUnwrap(all.first { ($0["ciphertext"] as? [String: Any])?["swap_chunks"] != nil })
        let recipe = try XCTUnwrap(operation["ciphertext"] as? [String: Any])
        let base = try XCTUnwrap(byID[try XCTUnwrap(recipe["test"] as? Int)])
        XCTAssertEqual(try run([base, operation]).passed, 2)
        // The wrong expected error, a missing base test, two operations, a bad index: failures.
        var wrongError = operation
        wrongError["error"] = "invalidPayload"
        XCTAssertEqual(try run([base, wrongError]).failed, 1)
        XCTAssertEqual(try run([operation]).failed, 1)
        var twoOps = operation
        twoOps["ciphertext"] = recipe.merging(["flip_byte": 0]) { a, _ in a }
        XCTAssertEqual(try run([base, twoOps]).failed, 1)
        var badIndex = operation
        badIndex["ciphertext"] = ["test": recipe["test"] as Any, "swap_chunks": [0, 99]]
        XCTAssertEqual(try run([base, badIndex]).failed, 1)
        // The unmodified ciphertext given as an operation that changes nothing would decrypt:
        // an error test whose ciphertext is valid fails.
        var noChange = operation
        noChange["ciphertext"] = ["test": recipe["test"] as Any, "append": ""]
        noChange["pointer"] = base["pointer"]
        XCTAssertEqual(try run([base, noChange]).failed, 1)
    }
}
