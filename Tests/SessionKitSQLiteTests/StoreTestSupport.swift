import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import XCTest

/// The fixed storage key of the tests and of the committed fixtures: bytes 0x00, 0x01, … 0x1f.
let fixtureStorageKeyBytes: [UInt8] = Array(0 ..< 32)

func fixtureStorageKey() throws -> StorageKey { try StorageKey(bytes: fixtureStorageKeyBytes) }

/// The package's `Tests/SessionKitSQLiteTests/Fixtures/`, found from this source file.
let fixturesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

extension XCTestCase {
    /// A new empty folder removed when the test ends.
    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sessionkit-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// The path of a database file (not created) in a new temporary folder.
    func temporaryStorePath() throws -> String {
        try temporaryFolder().appendingPathComponent("account.sqlite").path
    }

    /// Runs raw SQL on the file at `path` through a separate connection (the tests' attacker).
    func withRawDatabase<T>(_ path: String, _ body: (Database) throws -> T) throws -> T {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.writeWithoutTransaction(body)
    }

    /// The bytes of the database file and of its WAL (when there is one).
    func fileBytes(_ path: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for suffix in ["", "-wal", "-shm"] {
            if let data = FileManager.default.contents(atPath: path + suffix) { bytes += [UInt8](data) }
        }
        return bytes
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the bytes.
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        let first = needle[0]
        var index = 0
        while index <= count - needle.count {
            if self[index] == first, Array(self[index ..< index + needle.count]) == needle { return true }
            index += 1
        }
        return false
    }
}

/// Asserts that `body` throws `expected`.
func assertThrows<E: Error & Equatable>(
    _ expected: E, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void
) async {
    do {
        try await body()
        XCTFail("expected \(expected), nothing thrown", file: file, line: line)
    } catch let error as E {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
}

/// The error `body` throws, or a failure when it throws none.
func thrownError(file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void) async -> (any Error)? {
    do {
        try await body()
        XCTFail("expected an error, nothing thrown", file: file, line: line)
        return nil
    } catch {
        return error
    }
}
