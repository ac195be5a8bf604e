#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GRDB
@_spi(Testing) import SessionKit
import SessionKitSQLite
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// The storage key of every stress-test file: bytes 0x00 … 0x1f (as `sessionkit-stress` uses).
let stressStorageKeyBytes: [UInt8] = Array(0 ..< 32)

/// An address for tests (the ids used are always valid).
func address(_ text: String) -> ProtocolAddress {
    guard let dot = text.lastIndex(of: "."), let device = UInt32(text[text.index(after: dot)...]),
          let address = try? ProtocolAddress(userID: String(text[..<dot]), deviceID: device) else {
        preconditionFailure("invalid test address \(text)")
    }
    return address
}

/// One client process of the test: which account it acts as, on which file, and where its
/// messages go (the peer's queues).
struct ClientSpec {
    /// The client's name (its queue, ledger and message ids).
    let name: String
    /// The account (`user.device`).
    let account: String
    /// The account's database file in the test folder.
    let database: String
    /// The one peer (`user.device`).
    let peer: String
    /// The peer's client queues (each gets a copy of every message).
    let deliveries: [String]

    /// `sessionkit-stress run` arguments for this client in `folder`, plus `extra`.
    func arguments(in folder: URL, _ extra: [String]) -> [String] {
        ["run", "--dir", folder.path, "--client", name, "--account", account, "--db", database, "--peer", peer]
            + deliveries.flatMap { ["--deliver", $0] } + extra
    }
}

/// A running `sessionkit-stress` process, its output in a log file.
final class Child {
    let spec: ClientSpec
    let process = Process()
    let log: URL

    /// Starts `sessionkit-stress` for `spec` in `folder` with `extra` options.
    init(_ spec: ClientSpec, in folder: URL, _ extra: [String], logName: String) throws {
        self.spec = spec
        log = folder.appendingPathComponent("logs/\(logName).log")
        try FileManager.default.createDirectory(at: log.deletingLastPathComponent(), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        process.executableURL = try Self.binary()
        process.arguments = spec.arguments(in: folder, extra)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try output.close()
    }

    /// Sends SIGKILL. Returns whether the process was still running (and so was killed by it).
    func kill() -> Bool {
        guard process.isRunning else { return false }
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }

    /// Waits until the process exits, or `seconds` pass (then kills it). Returns whether it exited
    /// by itself with status 0.
    func finish(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(2_000) }
        if process.isRunning {
            _ = kill()
            return false
        }
        process.waitUntilExit()
        return process.terminationReason == .exit && process.terminationStatus == 0
    }

    /// How the process ended and the end of its log, for a failure message.
    var outcome: String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let reason = process.terminationReason == .exit ? "exit status" : "signal"
        return "\(spec.name) ended with \(reason) \(process.terminationStatus): \(text.suffix(2_000))"
    }

    /// The `sessionkit-stress` executable: `SESSIONKIT_STRESS` when set, else the one SwiftPM
    /// built next to the test bundle (the test target depends on it).
    static func binary() throws -> URL {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment["SESSIONKIT_STRESS"] { candidates.append(URL(fileURLWithPath: path)) }
        // Linux: the tests are an executable in the build folder; macOS: a .xctest bundle there
        // (looked up in Bundle.allBundles only there: Linux Foundation leaks the array it builds,
        // which fails the ASan run's leak check).
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        #if canImport(Darwin)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        #endif
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        let binaries = candidates.map { $0.lastPathComponent == "sessionkit-stress" ? $0 : $0.appendingPathComponent("sessionkit-stress") }
        guard let found = binaries.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw XCTSkip("sessionkit-stress not found (looked in \(binaries.map(\.path))); set SESSIONKIT_STRESS")
        }
        return found
    }
}

/// A (ratchet key, counter) slot of a sending chain: sending two messages in one slot is using
/// one message key (and nonce) twice.
struct Slot: Hashable, CustomStringConvertible {
    let ratchetKey: String
    let counter: UInt32
    var description: String { "(\(ratchetKey.prefix(16))…, \(counter))" }
}

/// One line of a client's ledger (see `sessionkit-stress`'s `Ledger`).
struct LedgerEvent {
    /// `CLOCK_MONOTONIC` nanoseconds.
    let time: UInt64
    let event: String
    let client: String
    /// The process run that wrote it.
    let instance: String
    let fields: [String]
    /// The position in its client's file.
    let position: Int
}

/// An envelope file in a queue (`mail/`) or acknowledged (`acked/`).
struct PostedEnvelope {
    /// The receiving client.
    let queue: String
    let acknowledged: Bool
    let sender: String
    let messageID: String
    let envelopeID: String
    let bytes: [UInt8]
    /// The slot the ciphertext was sent in.
    let slot: Slot
}

/// Everything the processes left in the test folder: the ledgers and every envelope ever posted.
struct Evidence {
    let folder: URL
    /// Every client's events in file order.
    let ledgers: [String: [LedgerEvent]]
    let envelopes: [PostedEnvelope]

    init(_ folder: URL) throws {
        self.folder = folder
        let manager = FileManager.default
        var ledgers: [String: [LedgerEvent]] = [:]
        for file in try manager.contentsOfDirectory(atPath: folder.appendingPathComponent("ledger").path) where file.hasSuffix(".log") {
            let text = try String(contentsOf: folder.appendingPathComponent("ledger/\(file)"), encoding: .utf8)
            var events: [LedgerEvent] = []
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                let parts = line.split(separator: " ").map(String.init)
                guard parts.count >= 4, let time = UInt64(parts[0]) else { throw TestFailure("a torn ledger line in \(file): \(line)") }
                events.append(LedgerEvent(
                    time: time, event: parts[1], client: parts[2], instance: parts[3], fields: Array(parts.dropFirst(4)),
                    position: events.count))
            }
            ledgers[String(file.dropLast(4))] = events
        }
        self.ledgers = ledgers
        timeline = ledgers.values.flatMap { $0 }.sorted { $0.time < $1.time }
        var envelopes: [PostedEnvelope] = []
        for (area, acknowledged) in [("mail", false), ("acked", true)] {
            let areaPath = folder.appendingPathComponent(area).path
            for queue in try manager.contentsOfDirectory(atPath: areaPath) where !queue.hasPrefix(".") {
                for name in try manager.contentsOfDirectory(atPath: areaPath + "/" + queue) where !name.hasPrefix(".") {
                    guard let data = manager.contents(atPath: areaPath + "/" + queue + "/" + name) else { continue }
                    var fields: [String: String] = [:]
                    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                        if parts.count == 2 { fields[parts[0]] = parts[1] }
                    }
                    guard let sender = fields["from"], let messageID = fields["message"], let envelopeID = fields["envelope"],
                          let bytes = fields["bytes"].flatMap(unhex) else { throw TestFailure("a malformed envelope \(queue)/\(name)") }
                    let message = try IncomingMessage(serialized: bytes).ratchetMessage
                    envelopes.append(PostedEnvelope(
                        queue: queue, acknowledged: acknowledged, sender: sender, messageID: messageID, envelopeID: envelopeID,
                        bytes: bytes, slot: Slot(ratchetKey: hex(message.ratchetKey.rawRepresentation), counter: message.counter)))
                }
            }
        }
        self.envelopes = envelopes
    }

    /// Every event of every client, in time order.
    let timeline: [LedgerEvent]

    /// The events named `event`.
    func events(_ event: String) -> [LedgerEvent] { timeline.filter { $0.event == event } }

    /// How many process runs each client had.
    var starts: [String: Int] { ledgers.mapValues { $0.filter { $0.event == "start" }.count } }

    /// Checks every property of the run and returns the violations (empty: all held).
    ///
    /// - `accounts`: each account's clients (one for the crash test; an app and an extension for
    ///   the two-process test).
    /// - `sequential`: each account's process runs followed one another (the crash test: a
    ///   killed run was dead before the next started), so a message whose state was committed
    ///   (decrypted, or found duplicate) must never reach its processing step again, and one
    ///   run runs a message's step at most once (one manager per file: no stale retries).
    ///   Otherwise (no kills, concurrent clients): each envelope is decrypted exactly once by
    ///   the account and each client's copy ends in exactly one outcome.
    func violations(accounts: [String: [String]], sequential: Bool) -> [String] {
        var problems: [String] = []
        let accountOf = Dictionary(uniqueKeysWithValues: accounts.flatMap { account, clients in clients.map { ($0, account) } })

        // 1. No slot sent twice by one sender account: in the posted ciphertexts (what the peer
        //    could read) and in the ledgers (everything encrypt returned, posted or not).
        var byEnvelope: [String: PostedEnvelope] = [:]
        for envelope in envelopes {
            if let other = byEnvelope[envelope.envelopeID], other.bytes != envelope.bytes {
                problems.append("envelope \(envelope.envelopeID) posted with two different ciphertexts")
            }
            byEnvelope[envelope.envelopeID] = envelope
        }
        var postedSlots: [String: [Slot: String]] = [:]
        for envelope in byEnvelope.values.sorted(by: { $0.envelopeID < $1.envelopeID }) {
            if let other = postedSlots[envelope.sender]?[envelope.slot] {
                problems.append("\(envelope.sender) sent slot \(envelope.slot) twice: envelopes \(other) and \(envelope.envelopeID)")
            }
            postedSlots[envelope.sender, default: [:]][envelope.slot] = envelope.envelopeID
        }
        var ledgerSlots: [String: [Slot: String]] = [:]
        var sentSlot: [String: Slot] = [:]
        for event in events("sent") {
            guard event.fields.count == 5, let counter = UInt32(event.fields[4]), let account = accountOf[event.client] else {
                problems.append("a malformed sent event: \(event)")
                continue
            }
            let slot = Slot(ratchetKey: event.fields[3], counter: counter)
            if let other = ledgerSlots[account]?[slot] {
                problems.append("\(account) encrypted twice in slot \(slot): envelopes \(other) and \(event.fields[1])")
            }
            ledgerSlots[account, default: [:]][slot] = event.fields[1]
            sentSlot[event.fields[1]] = slot
        }
        for envelope in byEnvelope.values where sentSlot[envelope.envelopeID] != envelope.slot {
            problems.append("envelope \(envelope.envelopeID) was posted without its slot in the ledger first")
        }

        // 2. Every envelope was acknowledged by its client, and its message is in the inbox.
        for envelope in envelopes {
            if !envelope.acknowledged { problems.append("envelope \(envelope.envelopeID) still waits for \(envelope.queue)") }
            guard let account = accountOf[envelope.queue] else {
                problems.append("an envelope for an unknown client \(envelope.queue)")
                continue
            }
            let stored = FileManager.default.contents(atPath: folder.appendingPathComponent("inbox/\(account)/\(envelope.messageID)").path)
            if stored.map({ [UInt8]($0) }) != Array(envelope.messageID.utf8) {
                problems.append("message \(envelope.messageID) (envelope \(envelope.envelopeID)) is not in \(account)'s inbox")
            }
        }

        // 3. Per receiving account and envelope: the step ran at least once; decrypt returned
        //    at most once; a duplicate was preceded by a step (the message was processed before
        //    its state was committed, never skipped).
        var outcomes: [String: [String: [LedgerEvent]]] = [:]  // account → envelope → events
        for event in timeline where ["step", "decrypted", "duplicate", "invalid"].contains(event.event) {
            guard let account = accountOf[event.client], let envelopeID = event.fields.first else { continue }
            outcomes[account, default: [:]][envelopeID, default: []].append(event)
        }
        var queuesOf: [String: [String]] = [:]
        for envelope in envelopes { queuesOf[envelope.envelopeID, default: []].append(envelope.queue) }
        for envelope in byEnvelope.values {
            let queues = queuesOf[envelope.envelopeID] ?? []
            let receivers = Set(queues.compactMap { accountOf[$0] })
            for account in receivers {
                let events = outcomes[account]?[envelope.envelopeID] ?? []
                let steps = events.filter { $0.event == "step" }
                let returns = events.filter { $0.event == "decrypted" }
                if steps.isEmpty { problems.append("\(account) never processed envelope \(envelope.envelopeID)") }
                if returns.count > 1 { problems.append("\(account) decrypted envelope \(envelope.envelopeID) \(returns.count) times") }
                for duplicate in events where duplicate.event == "duplicate" && !steps.contains(where: { $0.time < duplicate.time }) {
                    problems.append("\(duplicate.client) found envelope \(envelope.envelopeID) duplicate before any step ran for it")
                }
                for invalid in events where invalid.event == "invalid" {
                    // Only a message another client of the account decrypted earlier (whose
                    // receiving chain the session has since left) may fail so; never in a
                    // sequential run, where a redelivery comes before anything newer.
                    let decryptedElsewhere = returns.contains { $0.client != invalid.client && $0.time < invalid.time }
                    if sequential || !decryptedElsewhere {
                        problems.append("\(invalid.client) could not decrypt envelope \(envelope.envelopeID) (invalidMessage)")
                    }
                }
                if !sequential {
                    if returns.count != 1 {
                        problems.append("\(account) decrypted envelope \(envelope.envelopeID) \(returns.count) times, not once")
                    }
                    for client in accounts[account] ?? [] where queues.contains(client) {
                        let ends = events.filter { $0.client == client && $0.event != "step" }.count
                        if ends != 1 { problems.append("\(client) ended envelope \(envelope.envelopeID) \(ends) times") }
                    }
                }
            }
        }

        // 4. Sequential runs: no step after the message's state was committed, and at most one
        //    step per run.
        if sequential {
            for (client, events) in ledgers {
                var committed: Set<String> = []
                var stepsInRun: Set<String> = []
                var run = ""
                for event in events {
                    if event.instance != run {
                        run = event.instance
                        stepsInRun = []
                    }
                    guard let envelopeID = event.fields.first else { continue }
                    switch event.event {
                    case "step":
                        if committed.contains(envelopeID) {
                            problems.append("\(client) processed envelope \(envelopeID) again after its state was committed")
                        }
                        if !stepsInRun.insert(envelopeID).inserted {
                            problems.append("\(client) processed envelope \(envelopeID) twice in one run")
                        }
                    case "decrypted", "duplicate", "invalid": committed.insert(envelopeID)
                    default: break
                    }
                }
            }
        }

        // 5. A run that finished by itself (drained, or done) closed its store before it
        //    exited: `closed` is its last line.
        for (client, events) in ledgers {
            for run in Dictionary(grouping: events, by: \.instance).values {
                let names = run.sorted { $0.position < $1.position }.map(\.event)
                if names.contains(where: { $0 == "drained" || $0 == "done" }), names.last != "closed" {
                    problems.append("\(client) finished a run without closing its store (last: \(names.last ?? "nothing"))")
                }
            }
        }
        return problems
    }
}

/// A failure of the harness itself.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The two accounts of the tests, set up in `folder`: each with its SQLite file and prekeys,
/// and Alice's session with Bob started from Bob's bundle (Bob answers once Alice wrote).
enum Accounts {
    static let alice = "alice.1"
    static let bob = "bob.7"

    static func storageKey() throws -> StorageKey { try StorageKey(bytes: stressStorageKeyBytes) }

    static func setUp(in folder: URL) async throws {
        let aliceStore = try SQLiteProtocolStore(path: folder.appendingPathComponent("alice.sqlite").path, storageKey: try storageKey())
        let bobStore = try SQLiteProtocolStore(path: folder.appendingPathComponent("bob.sqlite").path, storageKey: try storageKey())
        let aliceManager = SessionManager(store: aliceStore, trust: aliceStore, localAddress: address(alice))
        let bobManager = SessionManager(store: bobStore, trust: bobStore, localAddress: address(bob))
        _ = try await aliceManager.maintainPreKeys()
        _ = try await bobManager.maintainPreKeys()
        let loaded = try await bobStore.loadPreKeys()
        let keys = try XCTUnwrap(loaded)
        let identity = try await bobStore.localIdentity()
        let bundle = PreKeyBundle(
            identityKey: identity.publicKey, signedPreKey: keys.currentSignedPreKey.key, oneTimePreKey: keys.oneTimePreKeys.first)
        try await aliceManager.processBundle(bundle, for: address(bob))
        try aliceStore.close()
        try bobStore.close()
        for folderName in ["mail", "acked", "ledger", "inbox", "outbox", "sent", "tmp"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(folderName), withIntermediateDirectories: true)
        }
    }

    /// After the run: each file passes `PRAGMA integrity_check`, opens as a store, holds the
    /// session with the peer, and the conversation goes on (one more message each way, in slots
    /// never used before). Returns the violations.
    static func checkFilesAndFinish(in folder: URL, evidence: Evidence) async throws -> [String] {
        var problems: [String] = []
        for name in ["alice.sqlite", "bob.sqlite"] {
            let queue = try DatabaseQueue(path: folder.appendingPathComponent(name).path)
            let result = try await queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            try queue.close()
            if result != ["ok"] { problems.append("\(name): integrity_check says \(result)") }
        }
        let options = SQLiteStoreOptions(createIfMissing: false)
        let aliceStore = try SQLiteProtocolStore(path: folder.appendingPathComponent("alice.sqlite").path, storageKey: try storageKey(), options: options)
        let bobStore = try SQLiteProtocolStore(path: folder.appendingPathComponent("bob.sqlite").path, storageKey: try storageKey(), options: options)
        defer {
            try? aliceStore.close()
            try? bobStore.close()
        }
        let aliceManager = SessionManager(store: aliceStore, trust: aliceStore, localAddress: address(alice))
        let bobManager = SessionManager(store: bobStore, trust: bobStore, localAddress: address(bob))
        let aliceSession = try await aliceStore.loadSession(for: address(bob))
        let bobSession = try await bobStore.loadSession(for: address(alice))
        if aliceSession == nil || bobSession == nil { problems.append("a session is missing after the run") }
        let usedSlots = Set(evidence.events("sent").compactMap { event in
            event.fields.count == 5 ? UInt32(event.fields[4]).map { Slot(ratchetKey: event.fields[3], counter: $0) } : nil
        })
        for (from, to, fromAddress, toAddress) in [(aliceManager, bobManager, alice, bob), (bobManager, aliceManager, bob, alice)] {
            let text = Array("after the run, from \(fromAddress)".utf8)
            let message = try await from.encrypt(text, to: address(toAddress))
            let ratchet = try IncomingMessage(serialized: message).ratchetMessage
            if usedSlots.contains(Slot(ratchetKey: hex(ratchet.ratchetKey.rawRepresentation), counter: ratchet.counter)) {
                problems.append("\(fromAddress)'s message after the run reuses a slot sent during the run")
            }
            let received = try await to.decrypt(message, from: address(fromAddress)).plaintext
            if received != text { problems.append("\(toAddress) read something else after the run") }
        }
        return problems
    }
}

extension XCTestCase {
    /// A new empty folder, removed when the test ends unless it failed (then its path is
    /// printed, with the ledgers and logs to look at) or `PROCESS_TESTS_KEEP` is set.
    func processTestFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sessionkit-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { [weak self] in
            let failed = (self?.testRun?.failureCount ?? 0) + (self?.testRun?.unexpectedExceptionCount ?? 0) > 0
            if failed || ProcessInfo.processInfo.environment["PROCESS_TESTS_KEEP"] != nil {
                print("process test folder kept: \(url.path)")
            } else {
                // rm -rf: FileManager.removeItem takes minutes over the tens of thousands of
                // files of a long crash run (Linux Foundation), rm a fraction of a second.
                let remover = Process()
                remover.executableURL = URL(fileURLWithPath: "/bin/rm")
                remover.arguments = ["-rf", url.path]
                if (try? remover.run()) != nil { remover.waitUntilExit() }
                try? FileManager.default.removeItem(at: url)
            }
        }
        return url
    }

    /// An integer from the environment, or `fallback`.
    func environmentInteger(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? fallback
    }
}

/// Lowercase hex (`Hex.encode`).
func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.encode(bytes) }

/// The bytes of lowercase hex text (what the stress tool writes), or `nil` (also for uppercase).
func unhex(_ text: String) -> [UInt8]? {
    guard !text.utf8.contains(where: { (UInt8(ascii: "A") ... UInt8(ascii: "F")).contains($0) }) else { return nil }
    return Hex.decode(text)
}
