import BenchmarkHarness

/// The memory figures of the suite: serialized session sizes and heap growth.
public enum MemoryCatalog {
    /// Measures every memory figure (`quick` shortens the heap-growth run).
    public static func measure(quick: Bool) -> [MemoryMeasurement] {
        []
    }
}
