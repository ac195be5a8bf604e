import BenchmarkHarness

/// Every case of the suite, in the order of the report.
public enum BenchmarkCatalog {
    /// All cases: the primitives, the protocol operations, attachments and age files (SPEC §10:
    /// scrypt at age's default work factor, 256 MiB files against the `age` command, the peak
    /// memory of a 1 GiB file; smaller files in the smoke run), `SessionManager`'s throughput,
    /// then the SQLite store (time and bytes written per message, and per prekey message with
    /// few and many replay records), then recovery (SPEC §9: retry notices created and verified,
    /// bytes per message sent with the send log on).
    public static var all: [BenchmarkCase] {
        PrimitiveCases.all + ProtocolCases.all + AttachmentCases.all + AgeScryptCases.all + AgeCLICases.all
            + AgeMemoryCases.all + ManagerCases.all + BurstCases.all + StoreCases.all + ReplayRecordCases.all + RecoveryCases.all
    }

    /// The cases whose name contains any of `filters` (all cases for an empty list).
    public static func cases(matching filters: [String]) -> [BenchmarkCase] {
        guard !filters.isEmpty else { return all }
        return all.filter { benchmark in filters.contains { benchmark.name.contains($0) } }
    }
}
