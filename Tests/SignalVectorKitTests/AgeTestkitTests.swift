import Foundation
import SignalVectorKit
import XCTest

/// The C2SP/CCTV age vector reader: the committed vectors pass, and the runner notices every
/// way a vector can disagree with the library (it never passes what it did not check).
final class AgeTestkitTests: XCTestCase {
    private func vector(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: try PackageLocations.vectorPath("age/\(name)")))
    }

    /// `data` with its header line starting with `key:` replaced by `replacement` (or removed
    /// when `replacement` is nil).
    private func replacingHeaderLine(_ key: String, in data: Data, with replacement: String?) throws -> Data {
        let separator = try XCTUnwrap(data.range(of: Data("\n\n".utf8)))
        let header = String(decoding: data[..<separator.lowerBound], as: UTF8.self)
        var lines = header.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let index = try XCTUnwrap(lines.firstIndex { $0.hasPrefix(key + ":") }, key)
        if let replacement { lines[index] = replacement } else { lines.remove(at: index) }
        return Data(lines.joined(separator: "\n").utf8) + data[separator.lowerBound...]
    }

    private func run(_ data: Data) -> VectorFileResult {
        ConformanceRunner().verify(data: data, path: "vector")
    }

    func testTheCommittedVectorsPassOrAreSkippedOnlyForThePostQuantumRecipient() throws {
        let report = ConformanceRunner().verify(paths: [try PackageLocations.vectorPath("age")])
        XCTAssertEqual(report.files.count, 143, "SOURCES.md counts 143 vector files")
        XCTAssertTrue(report.files.allSatisfy { $0.shape == .ageTestkit && $0.total == 1 })
        XCTAssertEqual(report.failed, 0, report.renderTable())
        let skipped = report.files.filter { $0.skipped == 1 }
        XCTAssertTrue(skipped.allSatisfy { $0.skipReasons == [AgeTestkitRunner.postQuantumSkipReason: 1] })
        // The vectors with a post-quantum identity: armor_hybrid and the 18 hybrid_* files
        // (SOURCES.md says 20 use the hybrid recipient; the files hold 19).
        var postQuantumOnly: [String] = []
        var postQuantumFiles = 0
        for file in report.files {
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: file.path)).prefix(2000), as: UTF8.self)
            let header = text.components(separatedBy: "\n\n")[0].split(separator: "\n")
            let usable = header.contains { $0.hasPrefix("passphrase: ") || $0.hasPrefix("identity: AGE-SECRET-KEY-1") }
            let postQuantum = header.contains { $0.hasPrefix("identity: AGE-SECRET-KEY-PQ-1") }
            if postQuantum { postQuantumFiles += 1 }
            if postQuantum && !usable { postQuantumOnly.append((file.path as NSString).lastPathComponent) }
        }
        XCTAssertEqual(postQuantumFiles, 19, "19 files name an AGE-SECRET-KEY-PQ-1… identity")
        XCTAssertEqual(postQuantumOnly.count, 18)
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            // SessionKitMLKEM's AgeHybridIdentity runs them all: nothing is skipped.
            XCTAssertEqual(skipped.count, 0, "\(skipped.map(\.path))")
            XCTAssertEqual(report.passed, 143)
            for name in postQuantumOnly {
                let file = report.files.first { ($0.path as NSString).lastPathComponent == name }
                XCTAssertEqual(file?.passed, 1, name)
            }
        } else {
            // Without swift-crypto's X-Wing exactly the vectors whose only identities are
            // AGE-SECRET-KEY-PQ-1… are skipped.
            XCTAssertEqual(Set(skipped.map { ($0.path as NSString).lastPathComponent }), Set(postQuantumOnly))
            XCTAssertEqual(report.passed, 125)
        }
    }

    func testAWrongExpectationOrPayloadHashFails() throws {
        let success = try vector("x25519")
        XCTAssertEqual(run(success).passed, 1)
        for expectation in ["no match", "HMAC failure", "header failure", "payload failure", "armor failure"] {
            let result = run(try replacingHeaderLine("expect", in: success, with: "expect: \(expectation)"))
            XCTAssertEqual(result.failed, 1, expectation)
            XCTAssertTrue(result.failures.first?.message.contains("got success") == true, "\(result.failures)")
        }
        let wrongHash = try replacingHeaderLine("payload", in: success, with: "payload: " + String(repeating: "00", count: 32))
        XCTAssertEqual(run(wrongHash).failed, 1)
        // A payload failure must release exactly the chunks before the failure.
        let partial = try vector("stream_bad_tag_second_chunk")
        XCTAssertEqual(run(partial).passed, 1)
        let emptyHash = "payload: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        XCTAssertEqual(run(try replacingHeaderLine("payload", in: partial, with: emptyHash)).failed, 1)
        // A header failure reported as another category fails.
        let header = try vector("hmac_not_canonical")
        XCTAssertEqual(run(header).passed, 1)
        XCTAssertEqual(run(try replacingHeaderLine("expect", in: header, with: "expect: HMAC failure")).failed, 1)
        // The wrong identity turns success into no match.
        let otherIdentity = "identity: AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
        XCTAssertEqual(run(try replacingHeaderLine("identity", in: success, with: otherIdentity)).failed, 1)
        let noMatch = try replacingHeaderLine("expect", in: try replacingHeaderLine("identity", in: success, with: otherIdentity), with: "expect: no match")
        XCTAssertEqual(run(try replacingHeaderLine("payload", in: noMatch, with: nil)).passed, 1)
    }

    func testPostQuantumVectorsRunAndUnknownKeysAreSkippedNeverPassed() throws {
        let success = try vector("x25519")
        // The x25519 file for the age.md example post-quantum identity: it is run (no stanza of
        // its type, so "no match" against the expected success), or skipped and named where
        // X-Wing is unavailable, never passed.
        let pq = "identity: AGE-SECRET-KEY-PQ-1XX76JRALNLXDMEW0CRK45QMCCH4X06SE84UN3VPM33W6HWDX0H3SK3ZQFR"
        let otherKey = run(try replacingHeaderLine("identity", in: success, with: pq))
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            XCTAssertEqual([otherKey.passed, otherKey.failed, otherKey.skipped], [0, 1, 0])
            XCTAssertTrue(otherKey.failures.first?.message.contains("got no match") == true, "\(otherKey.failures)")
            // A hybrid vector fails when its expectation or its identity is wrong.
            let hybrid = try vector("hybrid")
            XCTAssertEqual(run(hybrid).passed, 1)
            XCTAssertEqual(run(try replacingHeaderLine("expect", in: hybrid, with: "expect: no match")).failed, 1)
            XCTAssertEqual(run(try replacingHeaderLine("identity", in: hybrid, with: pq)).failed, 1)
            let lowOrder = try vector("hybrid_low_order")
            XCTAssertEqual(run(lowOrder).passed, 1)
            XCTAssertEqual(run(try replacingHeaderLine("expect", in: lowOrder, with: "expect: no match")).failed, 1)
            let badPQ = "identity: AGE-SECRET-KEY-PQ-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"
            XCTAssertEqual(run(try replacingHeaderLine("identity", in: hybrid, with: badPQ)).failed, 1)
        } else {
            XCTAssertEqual([otherKey.passed, otherKey.failed, otherKey.skipped], [0, 0, 1])
            XCTAssertEqual(otherKey.skipReasons, [AgeTestkitRunner.postQuantumSkipReason: 1])
            let table = VectorReport(files: [otherKey]).renderTable()
            XCTAssertTrue(table.contains("skipped: " + AgeTestkitRunner.postQuantumSkipReason), table)
        }
        let unknown = run(try replacingHeaderLine("comment", in: try vector("hybrid_x25519_arg"), with: "future key: 1"))
        XCTAssertEqual([unknown.passed, unknown.failed, unknown.skipped], [0, 0, 1])
    }

    func testCompressedArmoredAndMalformedVectorFiles() throws {
        // stream_two_chunks is zlib-compressed, armor_x25519 armored: both pass.
        XCTAssertTrue(String(decoding: try vector("stream_two_chunks").prefix(300), as: UTF8.self).contains("compressed: zlib"))
        XCTAssertEqual(run(try vector("stream_two_chunks")).passed, 1)
        XCTAssertEqual(run(try vector("armor_x25519")).passed, 1)
        // Dropping "armored: yes" makes the armored file a header failure, not a success.
        XCTAssertEqual(run(try replacingHeaderLine("armored", in: try vector("armor_x25519"), with: nil)).failed, 1)

        var truncated = try vector("stream_two_chunks")
        truncated.removeLast(10)
        XCTAssertTrue(run(truncated).failures.first?.message.contains("zlib") == true)
        for bad in ["expect: success\npayload: zz\n\nage", "expect: maybe\n\n", "expect: success\nno separator\n\n",
                    "expect: success\ncompressed: gzip\n\n", "payload: 00\n\n", "expect: success\n"] {
            let result = run(Data(bad.utf8))
            XCTAssertEqual(result.shape, .ageTestkit, bad)
            XCTAssertEqual(result.failed, 1, bad)
            XCTAssertEqual(result.passed, 0, bad)
        }
    }

    func testFoldersYieldTestkitFilesWithoutExtensionButNotOtherFiles() throws {
        let folder = try PackageLocations.temporaryFolder(for: self)
        try vector("x25519").write(to: folder.appendingPathComponent("x25519"))
        try Data("Copyright\n".utf8).write(to: folder.appendingPathComponent("LICENSE"))
        try Data("expect: success\n".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let entries = VectorFileDiscovery.entries(for: [folder.path])
        XCTAssertEqual(entries.map { ($0.path as NSString).lastPathComponent }, ["x25519"])
        XCTAssertTrue(ConformanceRunner().verify(paths: [folder.path]).succeeded)
    }
}
