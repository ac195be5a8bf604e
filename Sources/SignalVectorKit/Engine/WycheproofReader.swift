/// Runs a Wycheproof file (SPEC §8): top-level `algorithm` and `testGroups`, each test with
/// `tcId` and `result` (`valid`, `invalid` or `acceptable`).
///
/// Every problem is recorded in the file's result instead of being thrown: an unknown
/// algorithm, a missing `testGroups`, a group or test that is not an object, a missing `tcId`
/// or `result`, and a `numberOfTests` that disagrees with the tests present (a truncated file).
public struct WycheproofReader: Sendable {
    /// The algorithms this reader knows, by `algorithm` value.
    public let algorithms: [String: any WycheproofAlgorithm.Type]

    /// Creates a reader for `algorithms` (by default every registered algorithm).
    public init(algorithms: [String: any WycheproofAlgorithm.Type] = WycheproofRegistry.algorithms) {
        self.algorithms = algorithms
    }

    /// Runs the Wycheproof file `document` and records the outcome of each test in `result`.
    public func run(_ document: VectorTest, into result: inout VectorFileResult) {
        result.shape = .wycheproof
        guard let name = document.fields["algorithm"] as? String else {
            result.recordFailure(id: nil, "Wycheproof file without a string 'algorithm'")
            return
        }
        result.name = name
        guard let algorithm = algorithms[name] else {
            let known = algorithms.keys.sorted().joined(separator: ", ")
            result.recordFailure(id: nil, "unknown Wycheproof algorithm '\(name)' (known: \(known))")
            return
        }
        guard let groups = document.fields["testGroups"] as? [Any] else {
            result.recordFailure(id: nil, "missing or non-array field 'testGroups'")
            return
        }

        var testCount = 0
        for (groupIndex, item) in groups.enumerated() {
            guard let groupFields = item as? [String: Any] else {
                result.recordFailure(id: nil, "test group \(groupIndex + 1): not a JSON object")
                continue
            }
            let group = VectorTest(groupFields)
            let tests: [Any]
            guard let list = group.fields["tests"] as? [Any] else {
                result.recordFailure(id: nil, "test group \(groupIndex + 1): missing or non-array field 'tests'")
                continue
            }
            tests = list
            testCount += tests.count

            let disposition: WycheproofGroupDisposition
            do {
                disposition = try algorithm.disposition(of: group)
            } catch {
                for (testIndex, item) in tests.enumerated() {
                    let id = (item as? [String: Any]).map { VectorTest($0) }?.wycheproofID
                    result.recordFailure(id: id, "test group \(groupIndex + 1) (test \(testIndex + 1)): \(error)")
                }
                if tests.isEmpty { result.recordFailure(id: nil, "test group \(groupIndex + 1): \(error)") }
                continue
            }

            for (testIndex, item) in tests.enumerated() {
                guard let fields = item as? [String: Any] else {
                    result.recordFailure(id: nil, "test group \(groupIndex + 1), test \(testIndex + 1): not a JSON object")
                    continue
                }
                let test = VectorTest(fields)
                guard let id = test.wycheproofID else {
                    result.recordFailure(id: nil, "test group \(groupIndex + 1), test \(testIndex + 1): missing or non-integer field 'tcId'")
                    continue
                }
                guard let text = fields["result"] as? String else {
                    result.recordFailure(id: id, "missing or non-string field 'result'")
                    continue
                }
                guard let expectation = WycheproofExpectation(rawValue: text) else {
                    result.recordFailure(id: id, "unknown result '\(text)' (valid, invalid or acceptable)")
                    continue
                }
                if case let .skip(reason) = disposition {
                    result.recordSkip(reason)
                    continue
                }
                do {
                    result.record(try algorithm.run(test, expecting: expectation, in: group))
                } catch let failure as VectorFailure {
                    result.recordFailure(id: id, "\(expectation.rawValue): \(failure.message)")
                } catch {
                    result.recordFailure(id: id, "\(expectation.rawValue): unexpected error \(error)")
                }
            }
        }

        if let declared = document.fields["numberOfTests"] {
            if let count = VectorTest.integer(declared) {
                if count != testCount {
                    result.recordFailure(id: nil, "numberOfTests is \(count) but the file holds \(testCount) tests")
                }
            } else {
                result.recordFailure(id: nil, "field 'numberOfTests' is not an integer")
            }
        }
        if testCount == 0 && result.failed == 0 {
            result.recordFailure(id: nil, "the file holds no tests")
        }
    }
}

extension VectorTest {
    /// The Wycheproof `tcId`, when present and an integer.
    var wycheproofID: Int? { VectorTest.integer(fields["tcId"]) }
}
