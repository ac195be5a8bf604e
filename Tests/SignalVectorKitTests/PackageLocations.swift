import Foundation
import XCTest

/// Where the package's files are, found from this source file (`Tests/SignalVectorKitTests/`),
/// so the tests read the vectors committed with the package whatever the working directory.
enum PackageLocations {
    /// The package root.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // SignalVectorKitTests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()

    /// `TestVectors/`.
    static let testVectors = root.appendingPathComponent("TestVectors")

    /// The path of `TestVectors/<relative>`; throws (failing the test instead of letting it
    /// pass vacuously) when it does not exist.
    static func vectorPath(_ relative: String) throws -> String {
        let path = testVectors.appendingPathComponent(relative).path
        guard FileManager.default.fileExists(atPath: path) else { throw MissingVectors(path: path) }
        return path
    }

    /// A new empty temporary folder, removed when the test ends.
    static func temporaryFolder(for testCase: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("signal-vectors-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        testCase.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}

/// A vector file or folder the package must contain is missing.
struct MissingVectors: Error, CustomStringConvertible {
    let path: String
    var description: String {
        "missing \(path): the package's TestVectors/ must hold the SPEC §8 vector files (wycheproof/, rfc/, protocol/)"
    }
}
