import BenchmarkHarness
@_spi(Testing) import SessionKit

/// The memory figures of the suite: serialized session sizes and heap growth.
public enum MemoryCatalog {
    /// Measures every memory figure; a figure that cannot be measured is reported in `failures`.
    public static func measure() -> (measurements: [MemoryMeasurement], failures: [String]) {
        var measurements: [MemoryMeasurement] = []
        var failures: [String] = []
        do {
            let fixture = try ProtocolFixture()
            measurements.append(try LibraryMemory.freshSessionSize(fixture))
            let skipped = try LibraryMemory.sessionWithSkippedKeys(fixture)
            measurements.append(MemoryMeasurement(
                name: "session.serialized.2000-skipped", summary: "serialized session holding 2,000 skipped message keys",
                bytes: skipped.session.serialized().count))
            measurements.append(MemoryMeasurement(
                name: "session.heap.2000-skipped",
                summary: "heap held after 2,000 keys were skipped (the keys and their index)",
                bytes: skipped.heapBytes))
            let messages = 10_000
            measurements.append(MemoryMeasurement(
                name: "session.heap-growth.10000-messages",
                summary: "heap growth over 10,000 messages between two live sessions (bursts, alternating)",
                bytes: try LibraryMemory.heapGrowth(fixture, messages: messages)))
        } catch {
            failures.append("memory: \(error)")
        }
        return (measurements, failures)
    }
}
