import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Crash consistency of the order decrypt → process → persist → acknowledge (and encrypt →
/// persist → send): a process that dies before persisting gets the message again and
/// decrypts it as the first time; one that dies after persisting has lost nothing. Crashes
/// are simulated by `DiskStore`, which dies just before or just after a chosen write; the
/// app then restarts on the same disk and the server redelivers what was not acknowledged.
final class CrashConsistencyTests: XCTestCase {
    enum Step {
        case queue([String], to: Int)
        case flush
        case receive
    }

    /// Alice and Bob with prekeys published and Alice's session started from Bob's bundle.
    func connectedApps(seed: UInt64) async throws -> (MailServer, [CrashingApp]) {
        let server = MailServer()
        let apps = [try await CrashingApp("alice", seed: seed), try await CrashingApp("bob", seed: seed + 1)]
        for app in apps { await server.publish(try await app.manager.maintainPreKeys(), for: app.address) }
        let bundle = await server.bundle(for: apps[1].address)
        try await apps[0].manager.processBundle(try XCTUnwrap(bundle), for: apps[1].address)
        return (server, apps)
    }

    /// Runs `script` (device index, step); a step interrupted by a crash restarts the device
    /// and runs again. Returns whether a crash happened.
    func run(_ script: [(Int, Step)], apps: [CrashingApp], server: MailServer) async -> Bool {
        var crashed = false
        for (index, step) in script {
            let app = apps[index]
            while true {
                let completed: Bool
                switch step {
                case let .queue(texts, recipient):
                    for text in texts { await app.queue(text, to: apps[recipient].address) }
                    completed = true
                case .flush: completed = await app.flushOutbox(server)
                case .receive: completed = await app.receiveAll(server)
                }
                if completed { break }
                crashed = true
                app.restart()
            }
        }
        return crashed
    }

    static let conversation: [(Int, Step)] = [
        (0, .queue(["a1", "a2", "a3"], to: 1)), (0, .flush),
        (1, .receive), (1, .queue(["b1", "b2"], to: 0)), (1, .flush),
        (0, .receive), (0, .queue(["a4"], to: 1)), (0, .flush),
        (1, .queue(["b3"], to: 0)), (1, .flush),
        (1, .receive), (0, .receive),
        (0, .queue(["a5"], to: 1)), (0, .flush), (1, .receive),
    ]

    func testEveryCrashPointOfAConversationLosesNothingAndDecryptsNoEnvelopeTwice() async throws {
        // The writes each device makes during the conversation, without a crash.
        let (cleanServer, clean) = try await connectedApps(seed: 700)
        for app in clean { app.planCrash(at: Int.max, .beforeWrite) }
        let crashedWithoutPlan = await run(Self.conversation, apps: clean, server: cleanServer)
        XCTAssertFalse(crashedWithoutPlan)
        let cleanInboxes = [await clean[0].inbox(), await clean[1].inbox()]
        XCTAssertEqual(cleanInboxes, [["b1", "b2", "b3"], ["a1", "a2", "a3", "a4", "a5"]])
        let writes = [await clean[0].store.writeCount, await clean[1].store.writeCount]
        XCTAssertGreaterThan(writes[0], 10)
        XCTAssertGreaterThan(writes[1], 10)

        var runs = 0
        for victim in 0 ..< 2 {
            for write in 0 ..< writes[victim] {
                for point in CrashPoint.allCases {
                    let (server, apps) = try await connectedApps(seed: 700)
                    apps[victim].planCrash(at: write, point)
                    let crashed = await run(Self.conversation, apps: apps, server: server)
                    let context = "crash of \(apps[victim].address) at write \(write), \(point)"
                    XCTAssertTrue(crashed, "\(context): the planned crash happened")
                    XCTAssertEqual(apps[victim].restarts, 1, context)
                    let inboxes = [await apps[0].inbox(), await apps[1].inbox()]
                    XCTAssertEqual(inboxes, cleanInboxes, "\(context): every message arrived")
                    for app in apps {
                        XCTAssertTrue(app.decryptedEnvelopes.values.allSatisfy { $0 == 1 }, "\(context): an envelope decrypted twice")
                        let pending = await server.pending(for: app.address)
                        XCTAssertEqual(pending, [], "\(context): everything acknowledged")
                    }
                    runs += 1
                }
            }
        }
        XCTAssertEqual(runs, 2 * (writes[0] + writes[1]))
        print("crash sweep: \(runs) runs over \(writes) writes")
    }

    func testAPrekeyMessageInterruptedBeforeItsWriteEstablishesTheSessionAfterRestartWithTheSameOneTimePreKey() async throws {
        let (server, apps) = try await connectedApps(seed: 710)
        let (alice, bob) = (apps[0], apps[1])
        await alice.queue("first", to: bob.address)
        let flushed = await alice.flushOutbox(server)
        XCTAssertTrue(flushed)
        let keysBefore = try await bob.store.loadPreKeys()
        // Bob's writes: the inbox (in the processing step), then the session with the prekey.
        bob.planCrash(at: 1, .beforeWrite)
        let completed = await bob.receiveAll(server)
        XCTAssertFalse(completed, "the process died before committing the new session")
        bob.restart()
        let keysAfterCrash = try await bob.store.loadPreKeys()
        XCTAssertEqual(keysAfterCrash?.oneTimePreKeyCount, keysBefore?.oneTimePreKeyCount, "no one-time prekey consumed")
        let noSession = try await bob.store.loadSession(for: alice.address)
        XCTAssertNil(noSession)
        let received = await bob.receiveAll(server)
        XCTAssertTrue(received)
        let inbox = await bob.inbox()
        XCTAssertEqual(inbox, ["first"])
        let keysAfter = try await bob.store.loadPreKeys()
        XCTAssertEqual(keysAfter?.oneTimePreKeyCount, (keysBefore?.oneTimePreKeyCount ?? 0) - 1, "consumed once, on the successful retry")
    }

    func testPlainDecryptLosesTheMessageIfTheProcessDiesAfterTheWriteBeforeTheAppStoresIt() async throws {
        // Why `decrypt(_:from:beforePersisting:)` exists: with `decrypt(_:from:)` the plaintext
        // reaches the app only after the session write, so a crash in between loses it.
        let (server, apps) = try await connectedApps(seed: 720)
        let (alice, bob) = (apps[0], apps[1])
        await alice.queue("fragile", to: bob.address)
        _ = await alice.flushOutbox(server)
        let pending = await server.pending(for: bob.address)
        let envelope = try XCTUnwrap(pending.first)
        bob.planCrash(at: 0, .afterWrite)
        do {
            _ = try await bob.manager.decrypt(envelope.bytes, from: alice.address)
            XCTFail("the process was meant to die in the session write")
        } catch {
            XCTAssertEqual(error, DiskStore.crash)
        }
        bob.restart()
        do {
            _ = try await bob.manager.decrypt(envelope.bytes, from: alice.address)
            XCTFail("the message key was persisted as used")
        } catch {
            XCTAssertEqual(error, .duplicateMessage, "the redelivered message cannot be decrypted again")
        }
    }

    func testAnEncryptInterruptedAfterItsWriteCostsOneMessageNumberWhichTheReceiverSkips() async throws {
        let (server, apps) = try await connectedApps(seed: 730)
        let (alice, bob) = (apps[0], apps[1])
        await alice.queue("one", to: bob.address)
        await alice.queue("two", to: bob.address)
        alice.planCrash(at: 0, .afterWrite)      // the session write of "one"'s encryption
        let flushed = await alice.flushOutbox(server)
        XCTAssertFalse(flushed)
        alice.restart()
        let retried = await alice.flushOutbox(server)
        XCTAssertTrue(retried)
        let envelopes = await server.pending(for: bob.address)
        let counters = try envelopes.map { try IncomingMessage(serialized: $0.bytes).ratchetMessage.counter }
        XCTAssertEqual(counters, [1, 2], "number 0 was used by the lost encryption and is never reused")
        let received = await bob.receiveAll(server)
        XCTAssertTrue(received)
        let inbox = await bob.inbox()
        XCTAssertEqual(inbox, ["one", "two"])
        let record = try await bob.store.loadSession(for: alice.address)
        XCTAssertEqual(record?.currentSession?.skippedMessageKeyCount, 1, "the receiver keeps the key of the skipped number")
    }

    func testADistributionMessageIsNeverLostWhateverWriteTheProcessDiesIn() async throws {
        // Regression: `processSenderKeyDistribution(encrypted:)` persisted the pairwise session
        // before storing the chain, so dying in between lost the distribution for good (the
        // redelivered message was a duplicate and the chain was never stored). Now the chain
        // and the pairwise session are one commit: one write, all or nothing.
        for point in CrashPoint.allCases {
            do {
                let (_, apps) = try await connectedApps(seed: 740)
                let (alice, bob) = (apps[0], apps[1])
                let group = groupID("crash-group")
                try await bob.manager.setGroupMembers([alice.address], for: group)
                let outcomes = try await alice.manager.distributeSenderKey(for: group, to: [bob.address])
                let message = try XCTUnwrap(try outcomes.first?.result.get())
                let context = "crash at the commit, \(point)"
                bob.planCrash(at: 0, point)        // a new process: its first write
                do {
                    try await bob.manager.processSenderKeyDistribution(encrypted: message, for: group, from: alice.address)
                    XCTFail("\(context): the process was meant to die")
                } catch {
                    XCTAssertEqual(error, DiskStore.crash, context)
                }
                let attempted = await bob.store.writeCount
                XCTAssertEqual(attempted, 1, "\(context): one write for the chain and the session")
                bob.restart()
                do {
                    try await bob.manager.processSenderKeyDistribution(encrypted: message, for: group, from: alice.address)
                    XCTAssertEqual(point, .beforeWrite, "\(context): nothing was stored, so it is processed again")
                } catch {
                    // Only once the commit is done is the redelivered message a duplicate.
                    XCTAssertEqual(error, .duplicateMessage, context)
                    XCTAssertEqual(point, .afterWrite, "\(context): \(error)")
                }
                let groupMessage = try await alice.manager.groupEncrypt(Array("to the group".utf8), for: group)
                let plaintext = try await bob.manager.groupDecrypt(groupMessage, for: group, from: alice.address)
                XCTAssertEqual(plaintext, Array("to the group".utf8), "\(context): the chain was stored")
            }
        }
    }

    func testAGroupMessageStoredBeforeTheChainWriteSurvivesACrashOnEitherSideOfIt() async throws {
        for point in CrashPoint.allCases {
            let (_, apps) = try await connectedApps(seed: 750)
            let (alice, bob) = (apps[0], apps[1])
            let group = groupID("g")
            try await bob.manager.setGroupMembers([alice.address], for: group)
            let distribution = try await alice.manager.senderKeyDistributionMessage(for: group).serialized
            try await bob.manager.processSenderKeyDistribution(distribution, for: group, from: alice.address)
            let message = try await alice.manager.groupEncrypt(Array("g1".utf8), for: group)
            bob.planCrash(at: 1, point)            // write 0: the inbox; write 1: the chain
            let store = bob.store
            let process: @Sendable ([UInt8]) async throws(SessionError) -> Void = { (plaintext: [UInt8]) async throws(SessionError) in
                try await store.write(["inbox/" + String(decoding: plaintext, as: UTF8.self): plaintext])
            }
            do {
                _ = try await bob.manager.groupDecrypt(message, for: group, from: alice.address, beforePersisting: process)
                XCTFail("the process was meant to die in the chain write")
            } catch {
                XCTAssertEqual(error, DiskStore.crash)
            }
            bob.restart()
            let inbox = await bob.inbox()
            XCTAssertEqual(inbox, ["g1"], "\(point): the plaintext was stored before the chain")
            let retryStore = bob.store
            do {
                let again = try await bob.manager.groupDecrypt(message, for: group, from: alice.address, beforePersisting: { (plaintext: [UInt8]) async throws(SessionError) in
                    try await retryStore.write(["inbox/" + String(decoding: plaintext, as: UTF8.self): plaintext])
                })
                XCTAssertEqual(point, .beforeWrite, "only a crash before the chain write lets the message decrypt again")
                XCTAssertEqual(again, Array("g1".utf8))
            } catch {
                XCTAssertEqual(point, .afterWrite)
                XCTAssertEqual(error, .duplicateMessage, "after the chain write the message is a duplicate, and nothing was lost")
            }
        }
    }
}
