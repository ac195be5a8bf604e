import Foundation
import SignalVectorKit
import XCTest

/// Loads the protocol vector files of one suite from TestVectors/protocol (written by the
/// independent Python generator), found relative to this source file.
enum SessionVectorFiles {
    static var protocolFolder: URL { PackageLocations.testVectors.appendingPathComponent("protocol") }

    /// Every test of every file in TestVectors/protocol whose `suite` is `suite`, with the file name.
    static func tests(ofSuite suite: String) throws -> [(file: String, fields: [String: Any])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: try PackageLocations.vectorPath("protocol")).filter { $0.hasSuffix(".json") }.sorted()
        var out: [(file: String, fields: [String: Any])] = []
        for name in names {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: protocolFolder.appendingPathComponent(name)))
            guard let file = object as? [String: Any], file["suite"] as? String == suite else { continue }
            guard file["schema"] as? String == "sessionkit-vectors/2", let tests = file["tests"] as? [[String: Any]] else {
                XCTFail("\(name) is not a sessionkit-vectors/2 file")
                continue
            }
            out += tests.map { (name, $0) }
        }
        return out
    }

    /// Runs every test of `suite` through `Suite` and asserts that all pass; returns the count.
    @discardableResult
    static func runAll(_ suite: any ProtocolSuite.Type, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let tests = try tests(ofSuite: suite.name)
        XCTAssertGreaterThan(tests.count, 0, "no \(suite.name) vectors found in \(protocolFolder.path)", file: file, line: line)
        var passed = 0
        for (name, fields) in tests {
            let test = VectorTest(fields)
            do {
                let outcome = try suite.run(test)
                XCTAssertEqual(outcome, .passed, "\(name) test \(test.id)", file: file, line: line)
                if outcome == .passed { passed += 1 }
            } catch {
                XCTFail("\(name) test \(test.id): \(error)", file: file, line: line)
            }
        }
        XCTAssertEqual(passed, tests.count, file: file, line: line)
        return passed
    }

    /// `hex` with its last hex digit changed.
    static func flipLastDigit(_ hex: String) -> String {
        guard let last = hex.last else { return "00" }
        return String(hex.dropLast()) + (last == "0" ? "1" : "0")
    }
}
