import Foundation

/// The conformance engine behind `signal-vectors verify` and the test suite: reads vector
/// files of both SPEC §8 shapes and C2SP/CCTV's age vectors, and checks the library against
/// every test.
///
/// Nothing a file contains can make it trap: unreadable files, malformed JSON, unknown
/// algorithms or suites, missing fields and bad hex all become counted failures with a message.
public struct ConformanceRunner: Sendable {
    /// The reader for Wycheproof files.
    public let wycheproof: WycheproofReader
    /// The reader for protocol files.
    public let protocolFiles: ProtocolFileReader

    /// Creates a runner for the given suites and Wycheproof algorithms (by default, all registered).
    public init(
        suites: [String: any ProtocolSuite.Type] = SuiteRegistry.suites,
        algorithms: [String: any WycheproofAlgorithm.Type] = WycheproofRegistry.algorithms
    ) {
        wycheproof = WycheproofReader(algorithms: algorithms)
        protocolFiles = ProtocolFileReader(suites: suites)
    }

    /// Runs every vector file under `paths` (files, or folders searched recursively for `*.json`
    /// and C2SP/CCTV age vectors).
    /// A missing path or a folder without vector files is a failed entry of the report.
    public func verify(paths: [String]) -> VectorReport {
        var report = VectorReport()
        for entry in VectorFileDiscovery.entries(for: paths) {
            if let problem = entry.problem {
                var result = VectorFileResult(path: entry.path)
                result.recordFailure(id: nil, problem)
                report.files.append(result)
            } else {
                report.files.append(verifyFile(atPath: entry.path))
            }
        }
        return report
    }

    /// Runs one vector file.
    public func verifyFile(atPath path: String) -> VectorFileResult {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            var result = VectorFileResult(path: path)
            result.recordFailure(id: nil, "cannot read the file: \(error.localizedDescription)")
            return result
        }
        return verify(data: data, path: path)
    }

    /// Runs the vector file whose contents are `data`; `path` only labels the result. A C2SP/CCTV
    /// age vector (its first line `expect: …` or another testkit key) goes to `AgeTestkitRunner`;
    /// everything else must be a JSON file of one of the two SPEC §8 shapes.
    public func verify(data: Data, path: String) -> VectorFileResult {
        if AgeTestkitVector.looksLikeVector(data) { return AgeTestkitRunner.run(data: data, path: path) }
        var result = VectorFileResult(path: path)
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data, options: [])
        } catch {
            result.recordFailure(id: nil, "malformed JSON: \(Self.describe(error))")
            return result
        }
        guard let object = parsed as? [String: Any] else {
            result.recordFailure(id: nil, "the file is not one JSON object")
            return result
        }
        let document = VectorTest(object)
        if object["testGroups"] != nil || object["algorithm"] != nil {
            wycheproof.run(document, into: &result)
        } else if object["suite"] != nil || (object["schema"] as? String)?.hasPrefix("sessionkit-vectors") == true {
            protocolFiles.run(document, into: &result)
        } else {
            result.recordFailure(id: nil, "neither a Wycheproof file ('algorithm', 'testGroups') nor a protocol file ('schema': \"\(ProtocolFileReader.schema)\", 'suite', 'tests')")
        }
        return result
    }

    private static func describe(_ error: Error) -> String {
        let ns = error as NSError
        if let detail = ns.userInfo[NSDebugDescriptionErrorKey] as? String { return detail }
        return ns.localizedDescription
    }
}
