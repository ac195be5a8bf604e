/// One generated test: its fields in file order, without the `id` (the generator numbers the
/// tests 1, 2, … when it writes the file).
public typealias GeneratedTest = [JSONMember]

/// Writes fresh tests for one protocol suite, deterministically from a random stream, for
/// other implementations to check against (`signal-vectors generate`). One type per suite,
/// listed in `GeneratorRegistry`.
///
/// Expected values come from this library; every test is run through `suite` before the file
/// is written, and generators add the cross-checks they can (another route to the same value).
public protocol ProtocolSuiteGenerator: Sendable {
    /// The suite the tests belong to (its `name` is the file's `suite`).
    static var suite: any ProtocolSuite.Type { get }

    /// A one-line description of what the tests cover, written into the file's `source`.
    static var summary: String { get }

    /// The tests, in order, drawing every random value from `random`.
    /// - Throws: `VectorGenerationError` when the library disagrees with itself.
    static func tests(using random: DeterministicRandomSource) throws -> [GeneratedTest]
}

extension ProtocolSuiteGenerator {
    /// The output file name: the suite name with `-` replaced by `_`, plus `.json`.
    public static var fileName: String {
        String(suite.name.map { $0 == "-" ? "_" : $0 }) + ".json"
    }
}

/// Why `signal-vectors generate` could not produce or write a file.
public enum VectorGenerationError: Error, CustomStringConvertible, Sendable {
    /// A generator's own cross-check failed, or a generated test did not pass its suite.
    case selfCheckFailed(suite: String, reason: String)
    /// The output could not be written.
    case cannotWrite(path: String, reason: String)

    /// A one-line description.
    public var description: String {
        switch self {
        case let .selfCheckFailed(suite, reason): return "\(suite): self-check failed: \(reason)"
        case let .cannotWrite(path, reason): return "cannot write \(path): \(reason)"
        }
    }
}
