import Foundation
import SignalVectorKit
import XCTest

/// File discovery (folders searched recursively for `*.json`, other files skipped) and the
/// two renderings of a report (the table and `--json`).
final class ReportAndDiscoveryTests: XCTestCase {
    func testFoldersAreSearchedRecursivelyForJSONOnlyInPathOrder() throws {
        let folder = try PackageLocations.temporaryFolder(for: self)
        let manager = FileManager.default
        try manager.createDirectory(at: folder.appendingPathComponent("b/nested"), withIntermediateDirectories: true)
        try manager.createDirectory(at: folder.appendingPathComponent(".hidden"), withIntermediateDirectories: true)
        for name in ["b/nested/z.json", "a.json", "b/c.JSON", "generate.py", "README.md", "LICENSE", ".hidden/x.json", "b/notes.txt"] {
            try Data("{}".utf8).write(to: folder.appendingPathComponent(name))
        }
        let entries = VectorFileDiscovery.entries(for: [folder.path])
        XCTAssertEqual(entries.map { String($0.path.dropFirst(folder.path.count + 1)) }, ["a.json", "b/c.JSON", "b/nested/z.json"])
        XCTAssertTrue(entries.allSatisfy { $0.problem == nil })
    }

    /// A symbolic link back to an ancestor folder (a cycle) and a second link to a folder already
    /// searched add nothing: every file is found once, and discovery ends.
    func testSymlinkedFolderCyclesAreSearchedOnce() throws {
        let folder = try PackageLocations.temporaryFolder(for: self)
        let manager = FileManager.default
        try manager.createDirectory(at: folder.appendingPathComponent("sub/deeper"), withIntermediateDirectories: true)
        for name in ["a.json", "sub/b.json", "sub/deeper/c.json"] {
            try Data("{}".utf8).write(to: folder.appendingPathComponent(name))
        }
        // Two links up to the root (without the check, 2^40 paths) and one across to `sub`.
        try manager.createSymbolicLink(atPath: folder.appendingPathComponent("sub/deeper/up").path, withDestinationPath: folder.path)
        try manager.createSymbolicLink(atPath: folder.appendingPathComponent("sub/loop").path, withDestinationPath: "..")
        try manager.createSymbolicLink(atPath: folder.appendingPathComponent("again").path, withDestinationPath: "sub")

        let entries = VectorFileDiscovery.entries(for: [folder.path])
        let found = entries.map { String($0.path.dropFirst(folder.path.count + 1)) }
        XCTAssertEqual(found.count, 3, "\(found)")
        XCTAssertEqual(Set(found.map { ($0 as NSString).lastPathComponent }), ["a.json", "b.json", "c.json"])
        XCTAssertTrue(entries.allSatisfy { $0.problem == nil })
    }

    func testAFileGivenByPathIsReadWhateverItsExtension() throws {
        let folder = try PackageLocations.temporaryFolder(for: self)
        let path = folder.appendingPathComponent("vectors.txt").path
        try Data("{}".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(VectorFileDiscovery.entries(for: [path]), [VectorFileDiscovery.Entry(path: path, problem: nil)])
    }

    func testTableHasOneLinePerFileAndATotal() {
        var passing = VectorFileResult(path: "a.json", shape: .protocolSuite, name: "x25519-to-ed25519")
        passing.recordPass()
        passing.recordPass()
        var failing = VectorFileResult(path: "b.json", shape: .wycheproof, name: "AES-GCM")
        failing.recordPass()
        failing.recordSkip("AES-GCM keySize 128 is not offered (only 256)")
        failing.recordFailure(id: 7, "open failed")
        let report = VectorReport(files: [passing, failing])

        let lines = report.renderTable().split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 5)   // header, two files, one failure, total
        XCTAssertTrue(lines[1].hasPrefix("PASS") && lines[1].contains("a.json") && lines[1].contains("x25519-to-ed25519"))
        XCTAssertEqual(lines[1].split(separator: " ").suffix(3), ["2", "0", "0"])
        XCTAssertTrue(lines[2].hasPrefix("FAIL") && lines[2].contains("AES-GCM"))
        XCTAssertEqual(lines[2].split(separator: " ").suffix(3), ["1", "1", "1"])
        XCTAssertTrue(lines[3].contains("test 7: open failed"))
        XCTAssertTrue(lines[4].hasPrefix("FAIL") && lines[4].contains("TOTAL") && lines[4].contains("2 files"))
        XCTAssertEqual(lines[4].split(separator: " ").suffix(3), ["3", "1", "1"])
        XCTAssertFalse(report.succeeded)
        XCTAssertTrue(VectorReport(files: [passing]).succeeded)
    }

    func testJSONRenderingCarriesTheSameNumbers() throws {
        var result = VectorFileResult(path: "dir/\"quoted\".json", shape: .wycheproof, name: "HMACSHA256")
        result.recordPass()
        result.recordSkip("reason")
        result.recordFailure(id: nil, "line\nbreak")
        result.recordFailure(id: 3, "tag mismatch")
        let report = VectorReport(files: [result])

        let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report.json.rendered().utf8)) as? [String: Any])
        XCTAssertEqual(parsed["result"] as? String, "FAIL")
        let total = try XCTUnwrap(parsed["total"] as? [String: Any])
        XCTAssertEqual(total["files"] as? Int, 1)
        XCTAssertEqual(total["passed"] as? Int, 1)
        XCTAssertEqual(total["failed"] as? Int, 2)
        XCTAssertEqual(total["skipped"] as? Int, 1)
        let file = try XCTUnwrap((parsed["files"] as? [[String: Any]])?.first)
        XCTAssertEqual(file["path"] as? String, "dir/\"quoted\".json")
        XCTAssertEqual(file["shape"] as? String, "wycheproof")
        XCTAssertEqual(file["name"] as? String, "HMACSHA256")
        XCTAssertEqual(file["result"] as? String, "FAIL")
        XCTAssertEqual(file["skipReasons"] as? [String: Int], ["reason": 1])
        let failures = try XCTUnwrap(file["failures"] as? [[String: Any]])
        XCTAssertEqual(failures.count, 2)
        XCTAssertTrue(failures[0]["id"] is NSNull)
        XCTAssertEqual(failures[0]["message"] as? String, "line\nbreak")
        XCTAssertEqual(failures[1]["id"] as? Int, 3)
    }
}
