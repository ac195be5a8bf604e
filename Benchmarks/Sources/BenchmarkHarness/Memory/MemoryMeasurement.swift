/// One memory figure of the suite (a serialized size, a heap growth).
public struct MemoryMeasurement: Sendable, Equatable {
    /// A stable identifier, such as `session.serialized.fresh`.
    public let name: String
    /// What was measured.
    public let summary: String
    /// The value, in bytes.
    public let bytes: Int

    /// A measurement.
    public init(name: String, summary: String, bytes: Int) {
        self.name = name
        self.summary = summary
        self.bytes = bytes
    }

    /// The measurements as a JSON array of `{"name", "bytes", "summary"}` objects.
    public static func json(_ measurements: [MemoryMeasurement]) -> String {
        guard !measurements.isEmpty else { return "[]\n" }
        let rows = measurements.map {
            "  {\"name\": \(JSONReport.string($0.name)), \"bytes\": \($0.bytes), \"summary\": \(JSONReport.string($0.summary))}"
        }
        return "[\n" + rows.joined(separator: ",\n") + "\n]\n"
    }

    /// A Markdown table of the measurements.
    public static func markdown(_ measurements: [MemoryMeasurement]) -> String {
        var rows = [["memory", "bytes", "what"]]
        for measurement in measurements {
            rows.append([measurement.name, String(measurement.bytes), measurement.summary])
        }
        return ResultTable.render(rows, leftAligned: [2])
    }
}

/// Heap growth of a repeated operation: the bytes in use after `count` operations minus the
/// bytes in use before, with everything the operations return released in between.
public enum HeapGrowth {
    /// Runs `operation` `count` times and returns the growth of bytes in use.
    public static func measure(count: Int, _ operation: () throws -> Void) rethrows -> Int {
        let before = HeapProbe.bytesInUse()
        for _ in 0..<count { try operation() }
        return HeapProbe.bytesInUse() - before
    }
}
