@testable import BenchmarkCases
import Foundation
import XCTest

/// Loads the protocol vector files of SPEC §8 from the repository's TestVectors folder
/// (or from `SESSIONKIT_VECTORS`, a folder holding `protocol/`).
enum VectorFiles {
    static var root: URL {
        if let override = ProcessInfo.processInfo.environment["SESSIONKIT_VECTORS"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        // Benchmarks/Tests/BenchmarkTests/Support/VectorFiles.swift → repository root.
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TestVectors")
    }

    /// The `tests` array of `protocol/<name>`; skips the test when the file is not there.
    static func tests(_ name: String) throws -> [[String: Any]] {
        let url = root.appendingPathComponent("protocol").appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("vector file \(url.path) not found (set SESSIONKIT_VECTORS)")
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        guard let file = object as? [String: Any], let tests = file["tests"] as? [[String: Any]] else {
            throw VectorFormatError("\(name): no tests array")
        }
        // SPEC §8: a file of another schema (version 1's included) is a failure, never a pass.
        guard file["schema"] as? String == "sessionkit-vectors/2" else {
            throw VectorFormatError("\(name): schema \(file["schema"] ?? "none"), expected sessionkit-vectors/2")
        }
        return tests
    }

    /// The tests of several files of one suite, in order (ids continue across them).
    static func tests(_ names: [String]) throws -> [[String: Any]] {
        try names.flatMap { try tests($0) }
    }
}

struct VectorFormatError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Dictionary where Key == String, Value == Any {
    func hex(_ key: String) throws -> [UInt8] {
        guard let text = self[key] as? String, let bytes = hexBytes(text) else {
            throw VectorFormatError("missing or invalid hex field \(key)")
        }
        return bytes
    }

    func optionalHex(_ key: String) throws -> [UInt8]? {
        if self[key] == nil || self[key] is NSNull { return nil }
        return try hex(key)
    }

    func string(_ key: String) throws -> String {
        guard let text = self[key] as? String else { throw VectorFormatError("missing string field \(key)") }
        return text
    }

    func int(_ key: String) throws -> Int {
        guard let number = self[key] as? NSNumber else { throw VectorFormatError("missing integer field \(key)") }
        return number.intValue
    }

    func object(_ key: String) throws -> [String: Any] {
        guard let value = self[key] as? [String: Any] else { throw VectorFormatError("missing object \(key)") }
        return value
    }

    var hasError: Bool { self["error"] != nil }

    func optionalInt(_ key: String) -> Int? {
        (self[key] as? NSNumber)?.intValue
    }

    /// An address `{"uid": text, "device_id": int}` (SPEC §8).
    func address(_ key: String) throws -> ReferenceAddress {
        let object = try object(key)
        guard let uid = object["uid"] as? String, let device = object["device_id"] as? NSNumber else {
            throw VectorFormatError("invalid address \(key)")
        }
        return ReferenceAddress(uid: Array(uid.utf8), deviceID: device.uint32Value)
    }
}

/// Lowercase or uppercase hex to bytes; nil for odd length or another character.
func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
    var index = 0
    while index < digits.count {
        guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
        index += 2
    }
    return bytes
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
