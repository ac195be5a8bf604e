import Foundation
import SignalVectorKit
import XCTest

/// The runner must fail (a counted failure with a message, never a crash) on a corrupted
/// vector, an unknown suite or algorithm, malformed JSON, a missing field and bad hex.
final class RunnerFailureTests: XCTestCase {
    private let runner = ConformanceRunner()

    // MARK: - Helpers

    private func loadJSON(_ relative: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: try PackageLocations.vectorPath(relative)))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Writes `contents` as `name` into a fresh temporary folder and runs `verify` on the folder.
    private func verify(contents: Data, name: String = "vectors.json") throws -> VectorReport {
        let folder = try PackageLocations.temporaryFolder(for: self)
        try contents.write(to: folder.appendingPathComponent(name))
        return runner.verify(paths: [folder.path])
    }

    private func verify(object: Any) throws -> VectorFileResult {
        let data = try JSONSerialization.data(withJSONObject: object)
        let report = try verify(contents: data)
        XCTAssertEqual(report.files.count, 1)
        return try XCTUnwrap(report.files.first)
    }

    private func flippedHex(_ hex: String) -> String {
        let first = hex.prefix(2)
        let value = UInt8(first, radix: 16).map { $0 ^ 0x01 } ?? 0
        let byte = String(value, radix: 16)
        return String(repeating: "0", count: 2 - byte.count) + byte + hex.dropFirst(2)
    }

    private func protocolFile(suite: String = "ed25519-to-x25519", tests: [[String: Any]]) -> [String: Any] {
        ["schema": "sessionkit-vectors/2", "suite": suite, "source": "RunnerFailureTests", "tests": tests]
    }

    /// The first tests of the repository's ed25519-to-x25519 file.
    private func conversionTests(_ count: Int) throws -> [[String: Any]] {
        let document = try loadJSON("protocol/ed25519_to_x25519.json")
        let tests = try XCTUnwrap(document["tests"] as? [[String: Any]])
        return Array(tests.filter { $0["x25519_pk"] != nil }.prefix(count))
    }

    // MARK: - Corrupted vectors

    func testFlippedByteInAnExpectedOutputOfACopiedProtocolFileIsOneCountedFailure() throws {
        let original = try String(contentsOfFile: try PackageLocations.vectorPath("protocol/ed25519_to_x25519.json"), encoding: .utf8)
        let first = try XCTUnwrap(conversionTests(1).first)
        let id = try XCTUnwrap(first["id"] as? Int)
        let expected = try XCTUnwrap(first["x25519_pk"] as? String)
        let range = try XCTUnwrap(original.range(of: "\"\(expected)\""))
        let corrupted = original.replacingCharacters(in: range, with: "\"\(flippedHex(expected))\"")

        let intact = try verify(contents: Data(original.utf8))
        let report = try verify(contents: Data(corrupted.utf8))

        XCTAssertTrue(intact.succeeded)
        XCTAssertFalse(report.succeeded)
        XCTAssertEqual(report.failed, 1)
        XCTAssertEqual(report.passed, intact.passed - 1)
        let failure = try XCTUnwrap(report.files.first?.failures.first)
        XCTAssertEqual(failure.id, id)
        XCTAssertTrue(failure.message.contains("x25519_pk mismatch"), failure.message)
        XCTAssertTrue(report.renderTable().contains("FAIL"))
    }

    func testFlippedByteInTheExpectedOutputOfEachWycheproofAlgorithmIsOneCountedFailure() throws {
        let cases: [(file: String, field: String, group: (([String: Any]) -> Bool))] = [
            ("wycheproof/x25519_test.json", "shared", { _ in true }),
            ("wycheproof/ed25519_test.json", "sig", { _ in true }),
            ("wycheproof/aes_gcm_test.json", "tag", { $0["keySize"] as? Int == 256 && $0["ivSize"] as? Int == 96 }),
            ("wycheproof/hkdf_sha256_test.json", "okm", { _ in true }),
            ("wycheproof/hmac_sha256_test.json", "tag", { _ in true }),
        ]
        for (file, field, isRunGroup) in cases {
            var document = try loadJSON(file)
            var groups = try XCTUnwrap(document["testGroups"] as? [[String: Any]])
            let groupIndex = try XCTUnwrap(groups.firstIndex(where: isRunGroup))
            var tests = try XCTUnwrap(groups[groupIndex]["tests"] as? [[String: Any]])
            let testIndex = try XCTUnwrap(tests.firstIndex { $0["result"] as? String == "valid" })
            let value = try XCTUnwrap(tests[testIndex][field] as? String)
            tests[testIndex][field] = flippedHex(value)
            groups[groupIndex]["tests"] = tests
            document["testGroups"] = groups

            let result = try verify(object: document)
            XCTAssertEqual(result.failed, 1, "\(file): \(result.failures)")
            XCTAssertEqual(result.failures.first?.id, tests[testIndex]["tcId"] as? Int, file)
        }
    }

    // MARK: - Unreadable files and tests

    func testUnknownSuiteIsACountedFailure() throws {
        let result = try verify(object: protocolFile(suite: "no-such-suite", tests: conversionTests(2)))
        XCTAssertEqual(result.failed, 1)
        XCTAssertEqual(result.passed, 0)
        XCTAssertEqual(result.name, "no-such-suite")
        XCTAssertTrue(result.failures[0].message.contains("unknown suite 'no-such-suite'"), result.failures[0].message)
    }

    func testUnknownWycheproofAlgorithmIsACountedFailure() throws {
        var document = try loadJSON("wycheproof/hkdf_sha256_test.json")
        document["algorithm"] = "HKDF-SHA-1"
        let result = try verify(object: document)
        XCTAssertEqual(result.failed, 1)
        XCTAssertEqual(result.passed, 0)
        XCTAssertTrue(result.failures[0].message.contains("unknown Wycheproof algorithm 'HKDF-SHA-1'"))
    }

    func testMalformedJSONIsACountedFailure() throws {
        for text in ["{\"schema\": \"sessionkit-vectors/2\", \"suite\": ", "", "not json", "[1, 2, 3]", "\"text\""] {
            let report = try verify(contents: Data(text.utf8))
            XCTAssertEqual(report.failed, 1, text)
            XCTAssertFalse(report.succeeded, text)
            XCTAssertEqual(report.files.first?.shape, .unreadable, text)
        }
    }

    func testFileOfNeitherShapeIsACountedFailure() throws {
        let result = try verify(object: ["source": "an RFC transcription", "tests": [["name": "x"]]])
        XCTAssertEqual(result.failed, 1)
        XCTAssertTrue(result.failures[0].message.contains("neither a Wycheproof file"))
    }

    func testMissingFieldFailsThatTestOnlyAndNamesIt() throws {
        var tests = try conversionTests(3)
        tests[1].removeValue(forKey: "x25519_pk")
        let result = try verify(object: protocolFile(tests: tests))
        XCTAssertEqual(result.passed, 2)
        XCTAssertEqual(result.failed, 1)
        XCTAssertEqual(result.failures[0].id, tests[1]["id"] as? Int)
        XCTAssertTrue(result.failures[0].message.contains("'x25519_pk'"), result.failures[0].message)
    }

    func testBadHexFailsThatTestOnly() throws {
        var tests = try conversionTests(4)
        tests[0]["ed25519_pk"] = "zz" + String(repeating: "00", count: 31)
        tests[1]["x25519_pk"] = "abc"
        tests[2]["ed25519_pk"] = 12
        let result = try verify(object: protocolFile(tests: tests))
        XCTAssertEqual(result.passed, 1)
        XCTAssertEqual(result.failed, 3)
        XCTAssertTrue(result.failures[0].message.contains("not valid hex"), result.failures[0].message)
        XCTAssertTrue(result.failures[1].message.contains("not valid hex"), result.failures[1].message)
        XCTAssertTrue(result.failures[2].message.contains("non-string"), result.failures[2].message)
    }

    func testWrongLengthInputIsAFailureNotACrash() throws {
        var tests = try conversionTests(2)
        tests[0]["ed25519_pk"] = "00"
        tests[1]["ed25519_pk"] = ""
        let result = try verify(object: protocolFile(tests: tests))
        XCTAssertEqual(result.failed, 2)
    }

    func testMissingOrDuplicateIdsAndNonObjectTestsAreCountedFailures() throws {
        var tests: [Any] = try conversionTests(3)
        var noID = try XCTUnwrap(tests[0] as? [String: Any])
        noID.removeValue(forKey: "id")
        tests.append(noID)
        tests.append(tests[1])
        tests.append("not an object")
        let result = try verify(object: ["schema": "sessionkit-vectors/2", "suite": "ed25519-to-x25519", "tests": tests])
        XCTAssertEqual(result.passed, 3)
        XCTAssertEqual(result.failed, 3)
        XCTAssertTrue(result.failures.contains { $0.message.contains("more than once") })
        XCTAssertTrue(result.failures.contains { $0.message.contains("'id'") })
        XCTAssertTrue(result.failures.contains { $0.message.contains("not a JSON object") })
    }

    func testBooleanOrFractionalIdsAreNotIntegers() throws {
        var tests = try conversionTests(3)
        tests[0]["id"] = true
        tests[1]["id"] = 2.5
        let result = try verify(object: protocolFile(tests: tests))
        XCTAssertEqual(result.passed, 1)
        XCTAssertEqual(result.failed, 2)
        XCTAssertTrue(result.failures.allSatisfy { $0.message.contains("non-integer field 'id'") }, "\(result.failures)")
    }

    func testANonObjectWycheproofGroupFailsAndTheOtherGroupsStillRun() throws {
        var document = try loadJSON("wycheproof/hkdf_sha256_test.json")
        var groups = try XCTUnwrap(document["testGroups"] as? [Any])
        let declared = try XCTUnwrap(document["numberOfTests"] as? Int)
        groups.append("not a group")
        document["testGroups"] = groups
        let result = try verify(object: document)
        XCTAssertEqual(result.failed, 1)
        XCTAssertEqual(result.passed, declared)
        XCTAssertTrue(result.failures[0].message.contains("not a JSON object"))
    }

    /// Version 1's schema (and any other) is a failure, never a pass (SPEC §8).
    func testOtherSchemaMissingTestsAndEmptyTestsAreCountedFailures() throws {
        let documents: [[String: Any]] = [
            ["schema": "sessionkit-vectors/1", "suite": "ed25519-to-x25519", "tests": try conversionTests(1)],
            ["schema": "sessionkit-vectors/3", "suite": "ed25519-to-x25519", "tests": try conversionTests(1)],
            ["schema": "sessionkit-vectors/2", "suite": "ed25519-to-x25519"],
            ["schema": "sessionkit-vectors/2", "suite": "ed25519-to-x25519", "tests": []],
            ["schema": "sessionkit-vectors/2", "tests": try conversionTests(1)],
        ]
        for document in documents {
            let result = try verify(object: document)
            XCTAssertEqual(result.failed, 1, "\(document)")
            XCTAssertEqual(result.passed, 0, "\(document)")
        }
    }

    func testAnExpectedErrorThatIsNotRaisedIsAFailure() throws {
        var tests = try conversionTests(1)
        tests[0]["error"] = "invalidKey"
        let result = try verify(object: protocolFile(tests: tests))
        XCTAssertEqual(result.failed, 1)
        XCTAssertTrue(result.failures[0].message.contains("expected error invalidKey, but the call succeeded"))
    }

    func testMalformedWycheproofStructureIsCountedNotCrashed() throws {
        var document = try loadJSON("wycheproof/x25519_test.json")
        var groups = try XCTUnwrap(document["testGroups"] as? [[String: Any]])
        var tests = try XCTUnwrap(groups[0]["tests"] as? [[String: Any]])
        tests[0].removeValue(forKey: "tcId")
        tests[1]["result"] = "maybe"
        tests[2].removeValue(forKey: "result")
        tests[3]["public"] = "0g"
        groups[0]["tests"] = tests
        document["testGroups"] = groups
        let result = try verify(object: document)
        XCTAssertEqual(result.failed, 4, "\(result.failures)")
        XCTAssertEqual(result.passed, tests.count - 4)

        document["testGroups"] = "none"
        XCTAssertEqual(try verify(object: document).failed, 1)
    }

    func testNumberOfTestsThatDisagreesWithTheFileIsAFailure() throws {
        var document = try loadJSON("wycheproof/hkdf_sha256_test.json")
        let declared = try XCTUnwrap(document["numberOfTests"] as? Int)
        document["numberOfTests"] = declared + 1
        let result = try verify(object: document)
        XCTAssertEqual(result.failed, 1)
        XCTAssertEqual(result.passed, declared)
        XCTAssertTrue(result.failures[0].message.contains("numberOfTests"))
    }

    func testMissingPathAndFolderWithoutVectorsAreFailuresSoNothingPassesVacuously() throws {
        let folder = try PackageLocations.temporaryFolder(for: self)
        try Data("not vectors".utf8).write(to: folder.appendingPathComponent("README.md"))
        let missing = folder.appendingPathComponent("does-not-exist").path

        let report = runner.verify(paths: [folder.path, missing])
        XCTAssertFalse(report.succeeded)
        XCTAssertEqual(report.failed, 2)
        XCTAssertEqual(report.passed, 0)
        XCTAssertFalse(VectorReport().succeeded, "an empty report must not count as success")
    }

    // MARK: - Output

    func testTheTableListsFailingTestIdsCappedPerFile() throws {
        var tests = try conversionTests(15)
        for index in tests.indices {
            tests[index]["x25519_pk"] = flippedHex(try XCTUnwrap(tests[index]["x25519_pk"] as? String))
        }
        let result = try verify(object: protocolFile(tests: tests))
        XCTAssertEqual(result.failed, 15)
        let table = VectorReport(files: [result]).renderTable(maxFailuresPerFile: 10)
        let lines = table.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.contains("x25519_pk mismatch") }.count, 10)
        XCTAssertTrue(table.contains("… and 5 more failures"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("FAIL") && $0.contains("TOTAL") })
        for id in tests.prefix(10).compactMap({ $0["id"] as? Int }) {
            XCTAssertTrue(table.contains("test \(id): "), "test \(id) not listed")
        }
    }
}
