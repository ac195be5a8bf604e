import Foundation
import SignalPrimitives
import SignalVectorKit
import XCTest

/// The library against every vector committed in the package's TestVectors/ (SPEC §8), through
/// the same engine as `signal-vectors verify TestVectors`: any regression fails here.
final class PackageVectorsTests: XCTestCase {
    private static let folders = ["wycheproof", "rfc", "protocol", "age"]

    func testEveryVectorFileInTheRepositoryPassesWithTestsRun() throws {
        let root = try PackageLocations.vectorPath("")
        for folder in Self.folders { _ = try PackageLocations.vectorPath(folder) }

        let report = ConformanceRunner().verify(paths: [root])
        XCTAssertFalse(report.files.isEmpty, "no vector files under \(root)")
        for file in report.files {
            XCTAssertEqual(file.failed, 0, "\(file.path) (\(file.name)):\n" +
                file.failures.prefix(20).map { "  \($0.id.map { "test \($0)" } ?? "file"): \($0.message)" }.joined(separator: "\n"))
            // A C2SP/CCTV age vector is one test, skipped (and named) when it needs the
            // post-quantum recipient type (AgeTestkitTests checks which).
            if file.shape == .ageTestkit { continue }
            XCTAssertGreaterThan(file.passed, 0, "\(file.path) (\(file.name)) ran no test")
        }
        XCTAssertTrue(report.succeeded, report.renderTable())
    }

    func testEverySuiteAndWycheproofAlgorithmHasVectorsInTheRepository() throws {
        let report = ConformanceRunner().verify(paths: [try PackageLocations.vectorPath("")])
        let covered = Set(report.files.filter { $0.passed > 0 }.map(\.name))
        for suite in SuiteRegistry.suites.keys.sorted() {
            XCTAssertTrue(covered.contains(suite), "no passing protocol file for suite \(suite)")
        }
        for algorithm in WycheproofRegistry.algorithms.keys.sorted() {
            XCTAssertTrue(covered.contains(algorithm), "no passing Wycheproof file for \(algorithm)")
        }
    }

    func testTheUpstreamWycheproofFilesAreAllReadAndOnlyUnofferedAESGCMGroupsAreSkipped() throws {
        let folder = try PackageLocations.vectorPath("wycheproof")
        let report = ConformanceRunner().verify(paths: [folder])
        let byName = Dictionary(report.files.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(Set(byName.keys), ["XDH", "EDDSA", "AES-GCM", "HKDF-SHA-256", "HMACSHA256", "XCHACHA20-POLY1305", "ML-KEM"])
        for file in report.files where file.name != "AES-GCM" {
            XCTAssertEqual(file.skipped, 0, "\(file.path) skipped tests: \(file.skipReasons)")
            XCTAssertEqual(file.failed, 0, "\(file.path)")
        }
        // Every test of the SPEC v2 files runs (SOURCES.md counts them): none is skipped.
        let passedByFile = Dictionary(report.files.map { (($0.path as NSString).lastPathComponent, $0.passed) },
                                      uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(passedByFile["mlkem_768_test.json"], 193)
        XCTAssertEqual(passedByFile["mlkem_768_encaps_test.json"], 265)
        XCTAssertEqual(passedByFile["xchacha20_poly1305_test.json"], 315)
        let aesGCM = try XCTUnwrap(byName["AES-GCM"])
        guard AES256GCM.isAvailable else {
            XCTAssertEqual(aesGCM.passed, 0)
            XCTAssertEqual(aesGCM.skipped, 316, "without AES-NI every AES-GCM test is skipped, never passed")
            return
        }
        // Only the keySize 256 / ivSize 96 / tagSize 128 group runs; SOURCES.md counts 66 tests in it.
        XCTAssertEqual(aesGCM.passed, 66)
        XCTAssertEqual(aesGCM.passed + aesGCM.skipped, 316)
        XCTAssertTrue(aesGCM.skipReasons.keys.allSatisfy { $0.contains("not offered") }, "\(aesGCM.skipReasons)")
    }
}
