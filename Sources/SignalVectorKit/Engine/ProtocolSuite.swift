import Foundation
@_spi(Testing) import SessionKit
import SignalPrimitives
import Verification

/// A failed vector test: what differed, in one line.
public struct VectorFailure: Error, CustomStringConvertible, Sendable {
    /// The message shown by the runner.
    public let message: String
    /// Creates a failure.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// The outcome of one passing or skipped test.
public enum VectorOutcome: Equatable, Sendable {
    /// The library reproduced the expected result.
    case passed
    /// The test exercises parameters the library does not offer (counted apart, never as passed).
    case skipped(String)
}

/// One test object of a vector file, with typed accessors that throw `VectorFailure` on
/// malformed input (a missing field or bad hex is a failure of that test, never a crash).
public struct VectorTest {
    /// The raw JSON object.
    public let fields: [String: Any]

    /// Wraps a JSON object.
    public init(_ fields: [String: Any]) { self.fields = fields }

    /// The test's `id` (protocol files) or `tcId` (Wycheproof), or -1.
    public var id: Int { VectorTest.integer(fields["id"]) ?? VectorTest.integer(fields["tcId"]) ?? -1 }

    /// `value` as an integer when it is a JSON integer: not a boolean (Foundation bridges
    /// `true` to 1) and not a number written with a fraction or exponent.
    public static func integer(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber else { return nil }
        // JSONSerialization gives booleans the type code "c" and fractions "d"/"f".
        let kind = String(cString: number.objCType)
        guard kind != "c", kind != "d", kind != "f" else { return nil }
        return value as? Int
    }

    /// The expected SPEC §8 error name, if the test expects an error.
    public var expectedError: String? { fields["error"] as? String }

    /// Whether `key` is present and not JSON null.
    public func has(_ key: String) -> Bool { fields[key] != nil && !(fields[key] is NSNull) }

    /// A required hex field.
    /// - Throws: `VectorFailure` when `key` is missing, not a string, or not valid hex.
    public func hex(_ key: String) throws -> [UInt8] {
        guard let text = fields[key] as? String else { throw VectorFailure("missing or non-string field '\(key)'") }
        guard let bytes = Hex.decode(text) else { throw VectorFailure("field '\(key)' is not valid hex") }
        return bytes
    }

    /// An optional hex field (absent or null gives nil).
    /// - Throws: `VectorFailure` when `key` is present but not a string of valid hex.
    public func optionalHex(_ key: String) throws -> [UInt8]? {
        has(key) ? try hex(key) : nil
    }

    /// A required string field.
    /// - Throws: `VectorFailure` when `key` is missing or not a string.
    public func string(_ key: String) throws -> String {
        guard let text = fields[key] as? String else { throw VectorFailure("missing or non-string field '\(key)'") }
        return text
    }

    /// A required integer field.
    /// - Throws: `VectorFailure` when `key` is missing or not a JSON integer (booleans and
    ///   numbers with a fraction or exponent are not integers).
    public func int(_ key: String) throws -> Int {
        if let value = VectorTest.integer(fields[key]) { return value }
        throw VectorFailure("missing or non-integer field '\(key)'")
    }

    /// An optional integer field (absent or null gives nil).
    /// - Throws: `VectorFailure` when `key` is present but not a JSON integer.
    public func optionalInt(_ key: String) throws -> Int? {
        has(key) ? try int(key) : nil
    }

    /// A required unsigned 32-bit integer field (0 … 2^32 − 1).
    /// - Throws: `VectorFailure` when `key` is missing, not a JSON integer, or out of that range.
    public func uint32(_ key: String) throws -> UInt32 {
        let value = try int(key)
        guard let result = UInt32(exactly: value) else {
            throw VectorFailure("field '\(key)' is \(value), not a u32 (0 … 4294967295)")
        }
        return result
    }

    /// A required nested object.
    /// - Throws: `VectorFailure` when `key` is missing or not a JSON object.
    public func object(_ key: String) throws -> VectorTest {
        guard let value = fields[key] as? [String: Any] else { throw VectorFailure("missing or non-object field '\(key)'") }
        return VectorTest(value)
    }

    /// A required array of objects.
    /// - Throws: `VectorFailure` when `key` is missing, not an array, or holds a non-object.
    public func objects(_ key: String) throws -> [VectorTest] {
        guard let value = fields[key] as? [Any] else { throw VectorFailure("missing or non-array field '\(key)'") }
        return try value.map {
            guard let object = $0 as? [String: Any] else { throw VectorFailure("'\(key)' holds a non-object") }
            return VectorTest(object)
        }
    }

    /// A required array of hex strings.
    /// - Throws: `VectorFailure` when `key` is missing, not an array, or holds an entry that is
    ///   not a string of valid hex.
    public func hexArray(_ key: String) throws -> [[UInt8]] {
        guard let value = fields[key] as? [Any] else { throw VectorFailure("missing or non-array field '\(key)'") }
        return try value.map {
            guard let text = $0 as? String, let bytes = Hex.decode(text) else { throw VectorFailure("'\(key)' holds a non-hex entry") }
            return bytes
        }
    }
}

/// A protocol suite (`"schema": "sessionkit-vectors/2"`): one type per suite name of SPEC §8.
public protocol ProtocolSuite: Sendable {
    /// The suite name as written in the file's `suite` field.
    static var name: String { get }
    /// Runs one test. Returns `.passed` or throws `VectorFailure` describing the mismatch.
    static func run(_ test: VectorTest) throws -> VectorOutcome
}

/// A protocol suite whose tests may refer to other tests of the same file (SPEC §8's
/// `attachment` error tests: an operation on a valid test's ciphertext).
public protocol FileContextProtocolSuite: ProtocolSuite {
    /// Runs one test; `file` holds every test of the file by id.
    static func run(_ test: VectorTest, file: [Int: VectorTest]) throws -> VectorOutcome
}

/// Expected-error checking shared by every suite.
public enum ExpectedError {
    /// The SPEC §8 name of an error thrown by the library, or a description for other errors.
    ///
    /// A raw `CryptoError.invalidKeyLength` (a suite handing key bytes of the wrong length
    /// straight to a primitive, as the conversion suites do) is `invalidKey`, the SPEC §1 name
    /// for an unusable key; SessionKit itself reports a wrongly sized key inside a message as
    /// `invalidMessage`, which reaches this function as a `SessionError`.
    public static func name(of error: Error) -> String {
        if let error = error as? SessionError { return error.specName ?? "\(error)" }
        if let error = error as? VerificationError { return error.specName ?? "\(error)" }
        if let error = error as? CryptoError {
            if case .invalidKeyLength = error { return "invalidKey" }
            if let mapped = SessionError(error).specName { return mapped }
            return "\(error)"
        }
        if let error = error as? VectorFailure { return "runner failure: \(error.message)" }
        return "\(error)"
    }

    /// Checks that `body` throws the error `expected` names (`"any"` accepts every error).
    /// - Throws: `VectorFailure` when `body` succeeds or throws an error of another name, and
    ///   any `VectorFailure` that `body` throws, unchanged.
    public static func check(_ expected: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as VectorFailure {
            throw failure
        } catch {
            let actual = name(of: error)
            if expected == "any" || actual == expected { return }
            throw VectorFailure("expected error \(expected), got \(actual)")
        }
        throw VectorFailure("expected error \(expected), but the call succeeded")
    }

    /// Compares bytes and throws a readable failure.
    /// - Throws: `VectorFailure` naming `what` and both values when `actual` differs from `expected`.
    public static func equal(_ actual: [UInt8], _ expected: [UInt8], _ what: String) throws {
        guard actual == expected else {
            throw VectorFailure("\(what) mismatch: got \(Hex.encode(actual)), expected \(Hex.encode(expected))")
        }
    }
}
