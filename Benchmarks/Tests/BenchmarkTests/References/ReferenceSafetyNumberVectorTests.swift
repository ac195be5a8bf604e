@testable import BenchmarkCases
import XCTest

/// The naive safety number of both references reproduces SPEC §7's vectors.
final class ReferenceSafetyNumberVectorTests: XCTestCase {
    func testFloorSafetyNumberMatchesTheVectors() throws { try check(SodiumBackend.self) }

    func testSwiftCryptoSafetyNumberMatchesTheVectors() throws { try check(SwiftCryptoBackend.self) }

    private func check<B: ReferenceBackend>(_ backend: B.Type) throws {
        var checked = 0
        for test in try VectorFiles.tests("safety_number.json") where !test.hasError {
            let id = try test.int("id")
            let result = ReferenceSafetyNumber<B>.fingerprint(
                version: UInt8(try test.int("version")), iterations: try test.int("iterations"),
                localID: Array(try test.string("local_id").utf8), localKey: try test.hex("local_key"),
                remoteID: Array(try test.string("remote_id").utf8), remoteKey: try test.hex("remote_key"))
            XCTAssertEqual(result.displayable, try test.string("displayable"), "test \(id)")
            XCTAssertEqual(result.scannable, try test.hex("scannable"), "test \(id)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 0)
    }
}
