import Foundation
import XCTest

/// Two OS processes on one SQLite file (an app and its notification extension, both acting as
/// alice.1) encrypt to Bob and decrypt Bob's messages at the same time, while Bob runs in a
/// third process. Each alice process receives a copy of every Bob message. Checks (`Evidence`):
/// no (ratchet key, counter) sent twice by the two alice processes together, each Bob message
/// decrypted exactly once across them (the other finds it `duplicateMessage`), each alice
/// message decrypted exactly once by Bob, every message in its inbox, and the files intact.
final class TwoProcessTests: XCTestCase {
    static let app = ClientSpec(name: "app", account: Accounts.alice, database: "alice.sqlite", peer: Accounts.bob, deliveries: ["bob"])
    static let appExtension = ClientSpec(
        name: "ext", account: Accounts.alice, database: "alice.sqlite", peer: Accounts.bob, deliveries: ["bob"])
    static let bob = ClientSpec(name: "bob", account: Accounts.bob, database: "bob.sqlite", peer: Accounts.alice, deliveries: ["app", "ext"])

    func testAnAppAndItsExtensionOnOneFileNeverReuseASlotNorDecryptTwice() async throws {
        let folder = try processTestFolder()
        try await Accounts.setUp(in: folder)
        // PROCESS_MESSAGES: messages each alice process sends (Bob sends 1.5 times as many).
        let perAlice = environmentInteger("PROCESS_MESSAGES", 150)
        let fromBob = perAlice * 3 / 2
        let started = Date()
        let children = [
            try Child(Self.bob, in: folder, ["--send", "\(fromBob)", "--expect", "\(2 * perAlice)"], logName: "bob"),
            try Child(Self.app, in: folder, ["--send", "\(perAlice)", "--expect", "\(fromBob)"], logName: "app"),
            try Child(Self.appExtension, in: folder, ["--send", "\(perAlice)", "--expect", "\(fromBob)"], logName: "ext"),
        ]
        for child in children {
            let finished = child.finish(within: 600)
            XCTAssertTrue(finished, child.outcome)
        }
        let evidence = try Evidence(folder)
        let problems = evidence.violations(
            accounts: [Accounts.alice: ["app", "ext"], Accounts.bob: ["bob"]], sequential: false)
        for problem in problems.prefix(50) { XCTFail(problem) }
        XCTAssertEqual(problems.count, 0, "violations (the first 50 are listed)")
        let finishing = try await Accounts.checkFilesAndFinish(in: folder, evidence: evidence)
        for problem in finishing { XCTFail(problem) }

        // The run exercised what it claims: both alice processes sent and decrypted, and each
        // found some of Bob's messages already decrypted by the other.
        let decrypted = Dictionary(grouping: evidence.events("decrypted"), by: \.client).mapValues(\.count)
        let duplicates = Dictionary(grouping: evidence.events("duplicate"), by: \.client).mapValues(\.count)
        let sent = Dictionary(grouping: evidence.events("sent"), by: \.client).mapValues(\.count)
        XCTAssertEqual(sent, ["app": perAlice, "ext": perAlice, "bob": fromBob])
        XCTAssertEqual((decrypted["app"] ?? 0) + (decrypted["ext"] ?? 0), fromBob)
        let invalid = Dictionary(grouping: evidence.events("invalid"), by: \.client).mapValues(\.count)
        XCTAssertEqual((duplicates["app"] ?? 0) + (duplicates["ext"] ?? 0) + (invalid["app"] ?? 0) + (invalid["ext"] ?? 0), fromBob,
                       "the other process found each Bob message duplicate (or gone with an older chain)")
        XCTAssertEqual(decrypted["bob"], 2 * perAlice)
        let stale = evidence.events("stale").count
        print("two processes on one file: \(2 * perAlice) alice messages, \(fromBob) bob messages in "
            + String(format: "%.1f s", Date().timeIntervalSince(started))
            + "; alice decrypted \(decrypted), duplicates \(duplicates), invalidMessage (chain gone) \(invalid); "
            + "staleState reaching the app: \(stale)")
    }
}
