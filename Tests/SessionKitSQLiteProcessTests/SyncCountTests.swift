import Foundation
import XCTest

/// What `SQLiteStoreOptions.durability` costs, counted from outside: `sessionkit-stress commits`
/// makes N commits on a new store under `strace`, which records every `fsync` and `fdatasync`
/// with the file it synced. With `.powerLoss` (`synchronous = FULL`) each commit syncs the WAL;
/// with `.processCrash` (`NORMAL`) the WAL is synced only when it is checkpointed (here: at
/// close). Needs strace (Linux; `make deps` installs it); skipped without it.
final class SyncCountTests: XCTestCase {
    /// The strace executable, or a skip saying why there is none.
    private func strace() throws -> URL {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/bin", "/bin", "/usr/local/bin"]
        for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/strace") {
            return URL(fileURLWithPath: folder + "/strace")
        }
        throw XCTSkip("strace is not installed (on Debian or Ubuntu `make deps` installs it): the syncs per commit are not counted")
    }

    /// Runs `sessionkit-stress commits` under strace and returns how many syncs of the store's
    /// WAL it made.
    private func walSyncs(commits: Int, durability: String, in folder: URL) throws -> Int {
        let strace = try strace()
        let trace = folder.appendingPathComponent("\(durability).trace")
        let log = folder.appendingPathComponent("\(durability).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = strace
        process.arguments = [
            "-f", "-y", "-e", "trace=fsync,fdatasync", "-o", trace.path, try Child.binary().path,
            "commits", "--db", folder.appendingPathComponent("\(durability).sqlite").path, "--count", "\(commits)",
            "--durability", durability,
        ]
        // LeakSanitizer cannot run under ptrace (the ASan run's children would fail at exit).
        var environment = ProcessInfo.processInfo.environment
        environment["ASAN_OPTIONS"] = [environment["ASAN_OPTIONS"], "detect_leaks=0"].compactMap { $0 }.joined(separator: ":")
        process.environment = environment
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        try output.close()
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        if process.terminationStatus != 0, logged.contains("ptrace") {
            throw XCTSkip("strace cannot trace here (ptrace not permitted): \(logged.suffix(300))")
        }
        XCTAssertEqual(process.terminationStatus, 0, "strace sessionkit-stress commits: \(logged.suffix(2_000))")
        let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
        return lines.filter { ($0.contains("fdatasync(") || $0.contains("fsync(")) && $0.contains(".sqlite-wal>") }.count
    }

    func testPowerLossSyncsTheWALAtEveryCommitAndProcessCrashOnlyAtCheckpoints() throws {
        let folder = try processTestFolder()
        let commits = 40
        let full = try walSyncs(commits: commits, durability: "power", in: folder)
        let normal = try walSyncs(commits: commits, durability: "process", in: folder)
        XCTAssertGreaterThanOrEqual(full, commits, "powerLoss: \(full) syncs of the WAL for \(commits) commits")
        XCTAssertLessThan(normal, commits / 4, "processCrash: \(normal) syncs of the WAL for \(commits) commits")
        print("WAL syncs for \(commits) commits: \(full) with powerLoss, \(normal) with processCrash")
    }
}
