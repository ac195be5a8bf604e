// `swift run -c release bench [--quick] [--list] [--output DIR] [FILTER …]`
//
// Measures every case of the catalog (or those whose name contains a FILTER), prints the
// table, and writes DIR/latest.json, DIR/latest.md and DIR/memory.json (DIR defaults to
// Benchmarks/results). BENCH_QUICK=1 selects the short smoke run; BENCH_ROUNDS=n overrides
// the number of rounds; BENCH_FILTER=a,b adds filters. Only a full run (every case, not
// quick) writes the latest.* files; a filtered or quick run writes partial.json,
// partial.md and partial-memory.json instead, so it never replaces the full results.
//
// `bench --count N --contender NAME [--prepare-only] CASE` runs N operations of one
// contender of the named case (exact name) and nothing else, for instruction counting under
// callgrind (see instructions.sh): the difference between a run and a `--prepare-only` run
// is exactly the instructions of N timed operations.
import BenchmarkCases
import BenchmarkHarness
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
var environment = ProcessInfo.processInfo.environment
var outputDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("results")
var filters: [String] = (environment["BENCH_FILTER"] ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
var listOnly = false
var countOperations: Int?
var countContender: Contender?
var prepareOnly = false
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--quick":
        environment["BENCH_QUICK"] = "1"
        // The catalog reads it too: the large-file rows take smaller files in the smoke run.
        setenv("BENCH_QUICK", "1", 1)
    case "--list": listOnly = true
    case "--output":
        guard !arguments.isEmpty else {
            FileHandle.standardError.write(Data("--output needs a directory\n".utf8))
            exit(2)
        }
        outputDirectory = URL(fileURLWithPath: arguments.removeFirst())
    case "--count":
        countOperations = arguments.isEmpty ? nil : Int(arguments.removeFirst())
    case "--contender":
        countContender = arguments.isEmpty ? nil : Contender(rawValue: arguments.removeFirst())
    case "--prepare-only": prepareOnly = true
    case "--help", "-h":
        print("usage: bench [--quick] [--list] [--output DIR] [FILTER …]")
        exit(0)
    default: if !argument.isEmpty { filters.append(argument) }
    }
}

let cases = BenchmarkCatalog.cases(matching: filters)
if listOnly {
    for benchmark in cases {
        let contenders = benchmark.contenders.map(\.rawValue).joined(separator: ", ")
        print("\(benchmark.name)  [\(contenders)]  \(benchmark.summary)")
    }
    exit(0)
}

if let countOperations {
    guard let countContender else {
        FileHandle.standardError.write(Data("--count needs --contender library|floor|swift-crypto\n".utf8))
        exit(2)
    }
    // Exact names here, so that `x25519.dh` does not also count `x25519.dh.buffer`.
    let named = BenchmarkCatalog.all.filter { filters.contains($0.name) }
    var measured = false
    for benchmark in named {
        guard let workload = try benchmark.makeWorkload(for: countContender) else { continue }
        measured = true
        try workload.prepare?(countOperations)
        if !prepareOnly { try workload.run(countOperations) }
    }
    exit(measured ? 0 : 3)
}

let configuration = RunConfiguration.fromEnvironment(environment)
let runner = InterleavedRunner(configuration: configuration)
let machine = MachineDescription.summary
let quick = configuration.batchNanoseconds == RunConfiguration.quick.batchNanoseconds
let clockName = configuration.clock == .threadCPU ? "thread CPU-time" : "wall"
// The throughput rows (messages per second) are timed on the wall clock, in longer batches;
// the store rows in ns/op on the wall clock too (their work runs on the concurrency runtime's
// threads); the bytes rows count the bytes the process writes.
var unitNotes: [String] = []
if cases.contains(where: { $0.unit == .messagesPerSecond }) {
    unitNotes.append("msgs/s rows: wall clock, batches of at least \(CaseUnit.messagesPerSecond.minimumBatchNanoseconds / 1_000_000) ms")
}
if cases.contains(where: { $0.unit == .nanosecondsPerOperation && $0.requiredClock == .wall }) {
    unitNotes.append("store.sqlite ns/op rows: wall clock")
}
if cases.contains(where: { $0.unit == .bytesPerMessage }) {
    unitNotes.append("bytes/msg rows: bytes written by the process (/proc/self/io wchar), batches of at least "
        + "\(CaseUnit.bytesPerMessage.minimumBatchNanoseconds >> 20) MiB, at most \(CaseUnit.bytesPerMessage.maximumRounds ?? 0) rounds")
}
if cases.contains(where: { $0.group == .files }) {
    unitNotes.append("files rows: wall clock or peak resident bytes, at most a few rounds")
}
let throughputNote = unitNotes.map { "; " + $0 }.joined()
FileHandle.standardError.write(Data("""
    bench: \(cases.count) cases, \(configuration.rounds) interleaved rounds of \
    \(configuration.batchNanoseconds / 1000) µs batches timed on the \(clockName) clock\(quick ? " (quick smoke run)" : "")\(throughputNote)
    machine: \(machine)

    """.utf8))

var results: [CaseResult] = []
for benchmark in cases {
    let started = MonotonicClock.now()
    let result = runner.measure(benchmark)
    let seconds = Double(MonotonicClock.now() - started) / 1e9
    let line: String
    if let failure = result.failure {
        line = "  \(benchmark.name): FAILED \(failure)"
    } else if let skipped = result.skipped {
        line = "  \(benchmark.name): skipped: \(skipped)"
    } else {
        let ratio = result.ratioToFloor.map { String(format: "%.2f", $0) } ?? "—"
        line = "  \(benchmark.name): library/floor \(ratio) (\(String(format: "%.1f", seconds)) s)"
    }
    FileHandle.standardError.write(Data((line + "\n").utf8))
    results.append(result)
}

// Cases with a target relative to another case (forged.reject.40-previous) get its medians.
results = CaseResult.linkingBaselines(results)

let (memory, memoryFailures) = filters.isEmpty || filters.contains("memory")
    ? MemoryCatalog.measure() : ([], [])
for failure in memoryFailures { FileHandle.standardError.write(Data("  \(failure)\n".utf8)) }
let table = results.isEmpty ? "" : ResultTable.markdown(results)
if !results.isEmpty { print(table) }
if !memory.isEmpty {
    print(results.isEmpty ? "" : "\n", terminator: "")
    print(MemoryMeasurement.markdown(memory))
}

let markdown = """
    Machine: \(machine)
    Command: `make bench` (\(configuration.rounds) interleaved rounds per case, median ns/op on the \(clockName) clock\
    \(throughputNote))

    \(table)
    \(memory.isEmpty ? "" : "\n" + MemoryMeasurement.markdown(memory) + "\n")
    """
let isFullRun = filters.isEmpty && !quick
let (resultsName, tableName, memoryName) = isFullRun
    ? ("latest.json", "latest.md", "memory.json") : ("partial.json", "partial.md", "partial-memory.json")
do {
    try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
    try Data(JSONReport.encode(results, rounds: configuration.rounds, clock: configuration.clock).utf8)
        .write(to: outputDirectory.appendingPathComponent(resultsName))
    try Data(markdown.utf8).write(to: outputDirectory.appendingPathComponent(tableName))
    try Data(MemoryMeasurement.json(memory).utf8).write(to: outputDirectory.appendingPathComponent(memoryName))
    FileHandle.standardError.write(Data("wrote \(outputDirectory.path)/\(resultsName)\n".utf8))
} catch {
    FileHandle.standardError.write(Data("bench: cannot write results: \(error)\n".utf8))
    exit(1)
}
exit(results.contains { $0.failure != nil } || !memoryFailures.isEmpty ? 1 : 0)
