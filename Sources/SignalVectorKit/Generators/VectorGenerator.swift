import Foundation

/// Produces the protocol files of `signal-vectors generate`: for each generator, the tests drawn
/// from a `DeterministicRandomSource` seeded with `seed` (and labelled with the suite name),
/// numbered from 1, wrapped in the SPEC §8 protocol-file shape and self-checked by the
/// conformance engine. The same seed always gives byte-identical files.
public struct VectorGenerator: Sendable {
    /// One generated file.
    public struct File: Sendable {
        /// The file name, such as `ed25519_to_x25519.json`.
        public let fileName: String
        /// The suite name.
        public let suite: String
        /// The number of tests.
        public let testCount: Int
        /// The number of tests that expect an error.
        public let errorCount: Int
        /// The JSON text.
        public let contents: String
    }

    /// The seed of every random stream.
    public let seed: UInt64
    /// The generators to run, in order.
    public let generators: [any ProtocolSuiteGenerator.Type]

    /// Creates a generator for `seed` (by default over every registered generator).
    public init(seed: UInt64, generators: [any ProtocolSuiteGenerator.Type] = GeneratorRegistry.generators) {
        self.seed = seed
        self.generators = generators
    }

    /// Generates and self-checks every file.
    /// - Throws: `VectorGenerationError.selfCheckFailed` when a generated test does not pass.
    public func files() throws -> [File] {
        try generators.map { try file(for: $0) }
    }

    /// Generates every file and writes it into `directory` (created if needed).
    /// - Throws: `VectorGenerationError` when a self-check fails or a file cannot be written.
    @discardableResult
    public func write(to directory: String) throws -> [File] {
        let generated = try files()
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw VectorGenerationError.cannotWrite(path: directory, reason: error.localizedDescription)
        }
        for file in generated {
            let path = (directory as NSString).appendingPathComponent(file.fileName)
            do {
                try Data(file.contents.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw VectorGenerationError.cannotWrite(path: path, reason: error.localizedDescription)
            }
        }
        return generated
    }

    private func file(for generator: any ProtocolSuiteGenerator.Type) throws -> File {
        let suite = generator.suite
        let random = DeterministicRandomSource(seed: seed, label: suite.name)
        let tests = try generator.tests(using: random)
        let numbered: [JSONValue] = tests.enumerated().map { index, fields in
            .object([JSONMember("id", .int(index + 1))] + fields)
        }
        let document = JSONValue.object([
            JSONMember("schema", .string(ProtocolFileReader.schema)),
            JSONMember("suite", .string(suite.name)),
            JSONMember("source", .string("signal-vectors generate --seed \(seed) (SignalVectorKit); \(generator.summary)")),
            JSONMember("tests", .array(numbered)),
        ])
        let contents = document.rendered(indent: 1)

        let check = ConformanceRunner(suites: [suite.name: suite]).verify(data: Data(contents.utf8), path: generator.fileName)
        guard check.succeeded, check.passed == tests.count else {
            let reasons = check.failures.prefix(5).map { "\($0.id.map(String.init) ?? "file"): \($0.message)" }
            throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: reasons.joined(separator: "; "))
        }
        let errorCount = tests.filter { $0.contains { $0.key == "error" } }.count
        return File(fileName: generator.fileName, suite: suite.name, testCount: tests.count,
                    errorCount: errorCount, contents: contents)
    }
}
