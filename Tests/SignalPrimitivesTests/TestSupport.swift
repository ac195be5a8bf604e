import Foundation
import SignalPrimitives
import XCTest

/// Asserts that `body` throws exactly `expected` (the error type is checked at compile time:
/// `body` must be a `throws(CryptoError)` call).
func assertThrows<T>(_ expected: CryptoError, file: StaticString = #filePath, line: UInt = #line,
                     _ body: () throws(CryptoError) -> T) {
    do throws(CryptoError) {
        _ = try body()
        XCTFail("expected \(expected), but the call succeeded", file: file, line: line)
    } catch {
        XCTAssertEqual(error, expected, file: file, line: line)
    }
}

/// Asserts that `body`, which reaches a typed entry point through untyped buffer closures
/// (`Array.withUnsafeBytes` rethrows as `any Error`), throws exactly `expected`.
func assertThrowsThroughBuffers<T>(_ expected: CryptoError, file: StaticString = #filePath, line: UInt = #line,
                                   _ body: () throws -> T) {
    do {
        _ = try body()
        XCTFail("expected \(expected), but the call succeeded", file: file, line: line)
    } catch {
        XCTAssertEqual(error as? CryptoError, expected, file: file, line: line)
    }
}

/// `count` bytes 0, 1, 2, … (wrapping), for inputs whose value does not matter.
func counting(_ count: Int, from start: UInt8 = 0) -> [UInt8] {
    (0..<count).map { start &+ UInt8(truncatingIfNeeded: $0) }
}

/// Hex literal to bytes (test inputs only).
func bytes(_ hex: String) -> [UInt8] {
    guard let decoded = Hex.decode(hex) else {
        XCTFail("bad hex literal \(hex)")
        return []
    }
    return decoded
}

/// The RFC vectors of the package, `TestVectors/rfc/*.json`, in Wycheproof's shape, located
/// from this source file so the tests read what the package ships.
enum RFCVectors {
    struct Case {
        let group: [String: Any]
        let test: [String: Any]

        func hex(_ key: String) throws -> [UInt8] {
            let text = try XCTUnwrap(test[key] as? String, "missing \(key)")
            return try XCTUnwrap(Hex.decode(text), "bad hex in \(key)")
        }

        var comment: String { test["comment"] as? String ?? "" }
    }

    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TestVectors/rfc")

    /// Every test of `TestVectors/rfc/<name>`; throws when the file is missing or empty, so a
    /// test built on it cannot pass vacuously.
    static func cases(_ name: String) throws -> [Case] {
        let url = folder.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw MissingRFCVectors(path: url.path)
        }
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let groups = try XCTUnwrap(document["testGroups"] as? [[String: Any]])
        let cases = try groups.flatMap { group in
            try XCTUnwrap(group["tests"] as? [[String: Any]]).map { Case(group: group, test: $0) }
        }
        guard !cases.isEmpty else { throw MissingRFCVectors(path: url.path) }
        return cases
    }
}

struct MissingRFCVectors: Error, CustomStringConvertible {
    let path: String
    var description: String { "missing or empty \(path): the package's TestVectors/rfc/ must hold the RFC vectors" }
}
