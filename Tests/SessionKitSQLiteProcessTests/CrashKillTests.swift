import Foundation
import TestSupport
import XCTest

/// Crash safety for real: Alice and Bob, each a `sessionkit-stress` process on its own SQLite
/// file, converse without end (send a few, receive what is pending, again) and are killed with
/// SIGKILL at random moments, then started again from their files, `CRASH_ITERATIONS` times
/// (each iteration starts both and kills both, at independent random times in
/// [0, `CRASH_MAX_DELAY_MS`] ms: while opening the file, inside a transaction, between a
/// decrypt's processing step and its commit, between encrypt and posting...). Then both drain
/// their outboxes and queues, and `Evidence` checks the ledgers and every envelope ever posted:
///
/// - no (ratchet key, counter) encrypted twice by one account (no key and nonce used twice);
/// - every posted message acknowledged, its step run at least once and its plaintext in the
///   inbox (processed at least once);
/// - decrypt returned at most once per envelope, a redelivery found `duplicateMessage` only after
///   the step had run, and no step ran again once the message's state was committed nor twice in
///   one run (at most once, per the `beforePersisting` contract);
/// - both files pass `PRAGMA integrity_check`, open, and the conversation goes on.
///
/// The default run (part of `swift test`) makes a few kills; `make crash` makes hundreds.
final class CrashKillTests: XCTestCase {
    static let alice = ClientSpec(name: "alice", account: Accounts.alice, database: "alice.sqlite", peer: Accounts.bob, deliveries: ["bob"])
    static let bob = ClientSpec(name: "bob", account: Accounts.bob, database: "bob.sqlite", peer: Accounts.alice, deliveries: ["alice"])

    func testAConversationKilledAtRandomPointsLosesNothingAndNeverReusesAKeyOrDecryptsTwice() async throws {
        let iterations = environmentInteger("CRASH_ITERATIONS", 10)
        let maximumDelay = environmentInteger("CRASH_MAX_DELAY_MS", 400)
        let seed = UInt64(environmentInteger("CRASH_SEED", Int.random(in: 1 ... 1_000_000)))
        print("crash test: \(iterations) iterations, kills within \(maximumDelay) ms, CRASH_SEED=\(seed)")
        var random = SplitMix64(seed: seed)
        let folder = try processTestFolder()
        try await Accounts.setUp(in: folder)
        let started = Date()
        var kills = 0
        for iteration in 0 ..< iterations {
            // Both durabilities: a process crash must be survived by either.
            let durability = iteration.isMultiple(of: 2) ? "process" : "power"
            let children = try [Self.alice, Self.bob].map { spec in
                try Child(spec, in: folder, ["--durability", durability], logName: "\(spec.name)-\(iteration)")
            }
            let delays = children.map { _ in UInt64.random(in: 0 ... UInt64(maximumDelay) * 1_000, using: &random) }
            let start = DispatchTime.now().uptimeNanoseconds
            for (child, delay) in zip(children, delays).sorted(by: { $0.1 < $1.1 }) {
                let elapsed = (DispatchTime.now().uptimeNanoseconds - start) / 1_000
                if delay > elapsed { usleep(useconds_t(delay - elapsed)) }
                if child.kill() {
                    kills += 1
                } else {
                    XCTFail("iteration \(iteration): the process was not running when killed: \(child.outcome)")
                }
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        let killing = Date().timeIntervalSince(started)

        // Finish the conversation: each drains (sends its outbox, receives its queue) in turn
        // until nothing is left anywhere.
        var rounds = 0
        while rounds < 8 {
            rounds += 1
            for spec in [Self.alice, Self.bob] {
                let child = try Child(spec, in: folder, ["--drain"], logName: "\(spec.name)-drain-\(rounds)")
                let finished = child.finish(within: 300)
                XCTAssertTrue(finished, child.outcome)
                if !finished { return }
            }
            let pending = try ["mail/alice", "mail/bob", "outbox/alice", "outbox/bob"].map { folderName -> Int in
                let path = folder.appendingPathComponent(folderName).path
                guard FileManager.default.fileExists(atPath: path) else { return 0 }
                return try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }.count
            }
            if pending.allSatisfy({ $0 == 0 }) { break }
        }

        let draining = Date().timeIntervalSince(started) - killing
        let evidence = try Evidence(folder)
        let problems = evidence.violations(accounts: [Accounts.alice: ["alice"], Accounts.bob: ["bob"]], sequential: true)
        for problem in problems.prefix(50) { XCTFail(problem) }
        XCTAssertEqual(problems.count, 0, "violations (the first 50 are listed)")
        let finishing = try await Accounts.checkFilesAndFinish(in: folder, evidence: evidence)
        for problem in finishing { XCTFail(problem) }
        let checking = Date().timeIntervalSince(started) - killing - draining

        // What the run covered.
        XCTAssertEqual(kills, 2 * iterations, "every process was still running when killed")
        let steps = evidence.events("step")
        let stepCounts = Dictionary(grouping: steps, by: { $0.fields.first ?? "" }).mapValues(\.count)
        let repeatedSteps = stepCounts.values.filter { $0 > 1 }.count
        let envelopes = Set(evidence.envelopes.map(\.envelopeID)).count
        let resent = evidence.events("sent").count - Set(evidence.events("sent").map { $0.fields.first ?? "" }).count
        let unposted = evidence.events("sent").count - envelopes
        XCTAssertGreaterThan(envelopes, 0, "messages were exchanged")
        print("crash test: \(kills) kills in " + String(format: "%.1f s", killing) + ", \(rounds) drain rounds in " + String(format: "%.1f s", draining)
            + ", checks in " + String(format: "%.1f s", checking) + ", "
            + "\(envelopes) envelopes posted, \(evidence.events("decrypted").count) decrypt returns, "
            + "\(evidence.events("duplicate").count) redeliveries found duplicate, \(repeatedSteps) messages processed again after a "
            + "kill before their commit, \(resent) messages encrypted again after a kill before they were marked sent, "
            + "\(unposted) ciphertexts encrypted but never posted (killed before posting), runs per client \(evidence.starts)")
    }
}
