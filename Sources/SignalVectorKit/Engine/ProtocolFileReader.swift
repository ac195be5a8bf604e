/// Runs a protocol file (SPEC §8): `{"schema": "sessionkit-vectors/2", "suite": S,
/// "source": "...", "tests": [...]}`, each test with an integer `id`.
///
/// Every problem is recorded in the file's result instead of being thrown: another schema, an
/// unknown suite, a missing `tests` array, a test that is not an object or has no integer `id`,
/// a repeated `id`, and any failure a suite reports for a test (a wrong output, an expected
/// error not raised, a missing field, bad hex).
public struct ProtocolFileReader: Sendable {
    /// The schema value this reader accepts.
    public static let schema = "sessionkit-vectors/2"

    /// The suites this reader knows, by name.
    public let suites: [String: any ProtocolSuite.Type]

    /// Creates a reader for `suites` (by default every registered suite).
    public init(suites: [String: any ProtocolSuite.Type] = SuiteRegistry.suites) {
        self.suites = suites
    }

    /// Runs the protocol file `document` and records the outcome of each test in `result`.
    public func run(_ document: VectorTest, into result: inout VectorFileResult) {
        result.shape = .protocolSuite
        if let name = document.fields["suite"] as? String { result.name = name }
        guard let schema = document.fields["schema"] as? String else {
            result.recordFailure(id: nil, "protocol file without a string 'schema' (expected \"\(Self.schema)\")")
            return
        }
        guard schema == Self.schema else {
            result.recordFailure(id: nil, "unsupported schema '\(schema)' (expected \"\(Self.schema)\")")
            return
        }
        guard let name = document.fields["suite"] as? String else {
            result.recordFailure(id: nil, "protocol file without a string 'suite'")
            return
        }
        guard let suite = suites[name] else {
            let known = suites.keys.sorted().joined(separator: ", ")
            result.recordFailure(id: nil, "unknown suite '\(name)' (known: \(known.isEmpty ? "none" : known))")
            return
        }
        guard let tests = document.fields["tests"] as? [Any] else {
            result.recordFailure(id: nil, "missing or non-array field 'tests'")
            return
        }
        guard !tests.isEmpty else {
            result.recordFailure(id: nil, "the file holds no tests")
            return
        }

        // The tests by id, for suites whose tests refer to others of the file.
        var byID: [Int: VectorTest] = [:]
        if suite is any FileContextProtocolSuite.Type {
            for item in tests {
                if let fields = item as? [String: Any], let id = VectorTest.integer(fields["id"]), byID[id] == nil {
                    byID[id] = VectorTest(fields)
                }
            }
        }

        var seen = Set<Int>()
        for (index, item) in tests.enumerated() {
            guard let fields = item as? [String: Any] else {
                result.recordFailure(id: nil, "test \(index + 1) of the file: not a JSON object")
                continue
            }
            let test = VectorTest(fields)
            guard let id = VectorTest.integer(fields["id"]) else {
                result.recordFailure(id: nil, "test \(index + 1) of the file: missing or non-integer field 'id'")
                continue
            }
            guard seen.insert(id).inserted else {
                result.recordFailure(id: id, "id \(id) appears more than once")
                continue
            }
            do {
                if let contextual = suite as? any FileContextProtocolSuite.Type {
                    result.record(try contextual.run(test, file: byID))
                } else {
                    result.record(try suite.run(test))
                }
            } catch let failure as VectorFailure {
                result.recordFailure(id: id, failure.message)
            } catch {
                result.recordFailure(id: id, "unexpected error \(ExpectedError.name(of: error))")
            }
        }
    }
}
