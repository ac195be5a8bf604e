import Foundation
import SignalPrimitives
import SignalVectorKit
import XCTest

/// `signal-vectors generate`: deterministic, in the SPEC §8 shapes, passing the engine, and
/// drawing from the same byte stream as the Python generator's `Drbg`.
final class GeneratorTests: XCTestCase {
    func testDeterministicRandomSourceMatchesThePythonGeneratorsDrbg() {
        // TestVectors/generator/spec_primitives.py: Drbg(1, "ed25519-to-x25519").bytes(32), .bytes(40), .bytes(5)
        let random = DeterministicRandomSource(seed: 1, label: "ed25519-to-x25519")
        XCTAssertEqual(Hex.encode(random.bytes(32)), "664122a6bca14739829d1373395ce91a1786792a4428c20c2225cd8f7bca7ebd")
        XCTAssertEqual(Hex.encode(random.bytes(40)),
                       "1cfda5ba44a0f3a1fdf4aa941195999bc46e67d0760237d32efa4369308079a0019802808f7e6bb0")
        XCTAssertEqual(Hex.encode(random.bytes(5)), "d7b550e909")
    }

    func testSameSeedGivesByteIdenticalFilesAndAnotherSeedDifferentOnes() throws {
        let first = try VectorGenerator(seed: 42).files()
        let second = try VectorGenerator(seed: 42).files()
        let other = try VectorGenerator(seed: 43).files()
        XCTAssertEqual(first.map(\.contents), second.map(\.contents))
        XCTAssertEqual(first.map(\.fileName), other.map(\.fileName))
        for (a, b) in zip(first, other) { XCTAssertNotEqual(a.contents, b.contents, a.fileName) }
    }

    func testGeneratedFilesPassTheRunnerAndCoverErrorTests() throws {
        let folder = try PackageLocations.temporaryFolder(for: self)
        let files = try VectorGenerator(seed: 2026).write(to: folder.path)
        XCTAssertEqual(Set(files.map(\.suite)), ["ed25519-to-x25519", "ed25519-seed-to-x25519", "x25519-to-ed25519"])

        let report = ConformanceRunner().verify(paths: [folder.path])
        XCTAssertTrue(report.succeeded, report.renderTable())
        XCTAssertEqual(report.passed, files.reduce(0) { $0 + $1.testCount })
        XCTAssertTrue(report.files.allSatisfy { $0.shape == .protocolSuite && $0.passed > 0 })
        let conversion = try XCTUnwrap(files.first { $0.suite == "ed25519-to-x25519" })
        XCTAssertGreaterThan(conversion.errorCount, 40, "small-order, non-canonical, mixed-order and off-curve keys")
    }

    func testGeneratedFileHasTheProtocolShapeWithIdsInOrder() throws {
        let file = try XCTUnwrap(VectorGenerator(seed: 5).files().first)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(file.contents.utf8)) as? [String: Any])
        XCTAssertEqual(object["schema"] as? String, "sessionkit-vectors/2")
        XCTAssertEqual(object["suite"] as? String, file.suite)
        XCTAssertTrue((object["source"] as? String)?.contains("--seed 5") == true)
        let tests = try XCTUnwrap(object["tests"] as? [[String: Any]])
        XCTAssertEqual(tests.compactMap { $0["id"] as? Int }, Array(1...tests.count))
        XCTAssertTrue(tests.allSatisfy { $0["comment"] is String })
    }

    func testCorruptedGeneratedVectorFails() throws {
        let file = try XCTUnwrap(VectorGenerator(seed: 9).files().first { $0.suite == "x25519-to-ed25519" })
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(file.contents.utf8)) as? [String: Any])
        let tests = try XCTUnwrap(object["tests"] as? [[String: Any]])
        let expected = try XCTUnwrap(tests.last?["ed25519_pk"] as? String)
        let flipped = (expected.first == "0" ? "1" : "0") + expected.dropFirst()
        let corrupted = file.contents.replacingOccurrences(of: "\"\(expected)\"", with: "\"\(flipped)\"")
        let result = ConformanceRunner().verify(data: Data(corrupted.utf8), path: file.fileName)
        XCTAssertGreaterThanOrEqual(result.failed, 1)
        XCTAssertEqual(result.failures.last?.id, tests.last?["id"] as? Int)
    }
}
