/// The results of a `verify` run: one entry per file, the totals, and the two renderings the
/// command line prints (a table, or JSON with `--json`).
public struct VectorReport: Sendable, Equatable {
    /// The per-file results, in the order the files were read.
    public var files: [VectorFileResult]

    /// Creates a report.
    public init(files: [VectorFileResult] = []) { self.files = files }

    /// Passed tests over all files.
    public var passed: Int { files.reduce(0) { $0 + $1.passed } }
    /// Failed tests (and unreadable files) over all files.
    public var failed: Int { files.reduce(0) { $0 + $1.failed } }
    /// Skipped tests over all files.
    public var skipped: Int { files.reduce(0) { $0 + $1.skipped } }

    /// Whether the run succeeded: at least one file was read and nothing failed.
    /// This decides the exit status of `signal-vectors verify`.
    public var succeeded: Bool { !files.isEmpty && failed == 0 }

    /// The result of the file at `path`, if it was read.
    public func file(_ path: String) -> VectorFileResult? { files.first { $0.path == path } }

    // MARK: - Text

    /// The report as a table: one line per file (`PASS`/`FAIL`, file, suite or algorithm,
    /// passed, failed, skipped), each failing file followed by up to `maxFailuresPerFile` of its
    /// failures (test id and message), each file whose tests were all skipped by its skip
    /// reasons, then a total line.
    public func renderTable(maxFailuresPerFile: Int = 10) -> String {
        let header = ["RESULT", "FILE", "SUITE/ALGORITHM", "PASSED", "FAILED", "SKIPPED"]
        var rows = files.map { file in
            [file.succeeded ? "PASS" : "FAIL", file.path, file.name,
             String(file.passed), String(file.failed), String(file.skipped)]
        }
        let totalRow = [succeeded ? "PASS" : "FAIL", "TOTAL",
                        "\(files.count) file\(files.count == 1 ? "" : "s")",
                        String(passed), String(failed), String(skipped)]
        rows.append(totalRow)
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let fill = String(repeating: " ", count: widths[column] - cell.count)
                return column >= 3 ? fill + cell : cell + fill   // numbers right-aligned
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }

        var out = line(header) + "\n"
        for (file, row) in zip(files, rows) {
            out += line(row) + "\n"
            for failure in file.failures.prefix(max(maxFailuresPerFile, 0)) {
                out += "      \(failure.id.map { "test \($0)" } ?? "file"): \(failure.message)\n"
            }
            if file.failures.count > maxFailuresPerFile {
                out += "      … and \(file.failures.count - max(maxFailuresPerFile, 0)) more failures\n"
            }
            // A file whose every test was skipped says why.
            if file.skipped > 0, file.passed == 0, file.failed == 0 {
                for reason in file.skipReasons.keys.sorted() { out += "      skipped: \(reason)\n" }
            }
        }
        out += line(totalRow) + "\n"
        return out
    }

    // MARK: - JSON

    /// The report as JSON: `{"result": "PASS"|"FAIL", "total": {"files", "passed", "failed",
    /// "skipped"}, "files": [{"path", "shape", "name", "result", "passed", "failed", "skipped",
    /// "skipReasons": {reason: count}, "failures": [{"id" (null for a file or group), "message"}]}]}`.
    /// Every failure is listed (the table caps them).
    public var json: JSONValue {
        .object([
            JSONMember("result", .string(succeeded ? "PASS" : "FAIL")),
            JSONMember("total", .object([
                JSONMember("files", .int(files.count)),
                JSONMember("passed", .int(passed)),
                JSONMember("failed", .int(failed)),
                JSONMember("skipped", .int(skipped)),
            ])),
            JSONMember("files", .array(files.map(Self.json(for:)))),
        ])
    }

    private static func json(for file: VectorFileResult) -> JSONValue {
        .object([
            JSONMember("path", .string(file.path)),
            JSONMember("shape", .string(file.shape.rawValue)),
            JSONMember("name", .string(file.name)),
            JSONMember("result", .string(file.succeeded ? "PASS" : "FAIL")),
            JSONMember("passed", .int(file.passed)),
            JSONMember("failed", .int(file.failed)),
            JSONMember("skipped", .int(file.skipped)),
            JSONMember("skipReasons", .object(file.skipReasons.sorted { $0.key < $1.key }.map {
                JSONMember($0.key, .int($0.value))
            })),
            JSONMember("failures", .array(file.failures.map { failure in
                .object([
                    JSONMember("id", failure.id.map(JSONValue.int) ?? .null),
                    JSONMember("message", .string(failure.message)),
                ])
            })),
        ])
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
