import Foundation
import SignalPrimitives
import SignalVectorKit
import XCTest

/// The conversion suites name a key of the wrong length `invalidKey` (SPEC §1), whichever
/// side of the conversion it is on. The files are written to a temporary folder: they test
/// the runner, not the library's vectors.
final class ConversionErrorTests: XCTestCase {
    /// The wrong lengths tried for every 32-byte key.
    private let wrongLengths = [0, 31, 33, 64]

    private func verify(suite: String, field: String, expecting error: String) throws -> VectorFileResult {
        let tests: [[String: Any]] = wrongLengths.enumerated().map { index, length in
            ["id": index, "comment": "\(length)-byte key", field: String(repeating: "09", count: length), "error": error]
        }
        let document: [String: Any] = ["schema": "sessionkit-vectors/2", "suite": suite, "source": "ConversionErrorTests", "tests": tests]
        let folder = try PackageLocations.temporaryFolder(for: self)
        let file = folder.appendingPathComponent("\(suite).json")
        try JSONSerialization.data(withJSONObject: document).write(to: file)
        let report = ConformanceRunner().verify(paths: [file.path])
        return try XCTUnwrap(report.files.first)
    }

    func testWrongLengthKeysAreInvalidKeyInEveryConversionSuite() throws {
        for (suite, field) in [(Ed25519ToX25519Suite.name, "ed25519_pk"),
                               (Ed25519SeedToX25519Suite.name, "ed25519_seed"),
                               (X25519ToEd25519Suite.name, "x25519_pk")] {
            let named = try verify(suite: suite, field: field, expecting: "invalidKey")
            XCTAssertEqual([named.passed, named.failed], [wrongLengths.count, 0], "\(suite): \(named.failures)")
            let misnamed = try verify(suite: suite, field: field, expecting: "invalidMessage")
            XCTAssertEqual([misnamed.passed, misnamed.failed], [0, wrongLengths.count], "\(suite)")
            XCTAssertTrue(misnamed.failures.allSatisfy { $0.message.contains("got invalidKey") }, "\(suite): \(misnamed.failures)")
        }
    }

    func testARawKeyLengthErrorIsNamedInvalidKey() {
        XCTAssertEqual(ExpectedError.name(of: CryptoError.invalidKeyLength(expected: 32, actual: 31)), "invalidKey")
        XCTAssertEqual(ExpectedError.name(of: CryptoError.invalidKey), "invalidKey")
        XCTAssertEqual(ExpectedError.name(of: CryptoError.authenticationFailure), "invalidMessage")
    }
}
