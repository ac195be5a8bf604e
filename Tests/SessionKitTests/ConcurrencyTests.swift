import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Per-address serialisation: the keyed lock itself, and many tasks encrypting and decrypting
/// across several peers through their managers.
final class ConcurrencyTests: XCTestCase {
    /// Records events from concurrent tasks.
    private actor Log {
        private(set) var events: [String] = []
        private(set) var inside = 0
        private(set) var maximumInside = 0
        func enter(_ label: String) {
            events.append("enter \(label)")
            inside += 1
            maximumInside = max(maximumInside, inside)
        }
        func exit(_ label: String) {
            events.append("exit \(label)")
            inside -= 1
        }
        func append(_ event: String) { events.append(event) }
    }

    // MARK: KeyedAsyncLock

    func testHoldersOfOneKeyNeverOverlap() async throws {
        let lock = KeyedAsyncLock<Int>()
        let log = Log()
        await withTaskGroup(of: Void.self) { group in
            for index in 0 ..< 40 {
                group.addTask {
                    _ = try? await lock.withLock(0) { () async throws(SessionError) in
                        await log.enter("\(index)")
                        for _ in 0 ..< 3 { await Task.yield() }
                        await log.exit("\(index)")
                    }
                }
            }
        }
        let maximumInside = await log.maximumInside
        XCTAssertEqual(maximumInside, 1)
        let events = await log.events
        XCTAssertEqual(events.count, 80)
        for pair in stride(from: 0, to: events.count, by: 2) {
            XCTAssertEqual(events[pair].dropFirst(6), events[pair + 1].dropFirst(5), "each holder exits before the next enters")
        }
        let held = await lock.isHeld(0)
        XCTAssertFalse(held)
    }

    /// Several keys in one call: the free ones at once, a held one after its holder; a
    /// cancelled wait releases the keys taken so far.
    func testSeveralKeysAreTakenTogetherAndACancelledWaitReleasesThem() async throws {
        let lock = KeyedAsyncLock<String>()
        try await lock.acquire("b")
        let together = Task { () async throws -> Bool in
            try await lock.acquire(all: ["a", "b", "c"])
            return true
        }
        while await lock.waiterCount("b") < 1 { await Task.yield() }
        let aHeld = await lock.isHeld("a"), cHeld = await lock.isHeld("c")
        XCTAssertTrue(aHeld, "the free key before the held one is taken")
        XCTAssertFalse(cHeld, "the keys after the held one wait")
        await lock.release("b")
        let took = try await together.value
        XCTAssertTrue(took)
        for key in ["a", "b", "c"] {
            let held = await lock.isHeld(key)
            XCTAssertTrue(held, key)
        }
        await lock.release(all: ["a", "b", "c"])

        try await lock.acquire("b")
        let cancelled = Task { () async -> SessionError? in
            do throws(SessionError) {
                try await lock.acquire(all: ["a", "b"])
                return nil
            } catch {
                return error
            }
        }
        while await lock.waiterCount("b") < 1 { await Task.yield() }
        cancelled.cancel()
        let error = await cancelled.value
        XCTAssertEqual(error, .cancelled)
        let aAfter = await lock.isHeld("a")
        XCTAssertFalse(aAfter, "the key taken before the cancelled wait is released")
        await lock.release("b")
    }

    func testWaitersAreServedInArrivalOrder() async throws {
        let lock = KeyedAsyncLock<String>()
        let log = Log()
        try await lock.acquire("peer")
        var tasks: [Task<Void, Never>] = []
        // 40 waiters: the queue is compacted several times as they are served.
        for index in 0 ..< 40 {
            tasks.append(Task {
                _ = try? await lock.withLock("peer") { () async throws(SessionError) in await log.append("\(index)") }
            })
            while await lock.waiterCount("peer") < index + 1 { await Task.yield() }
        }
        await lock.release("peer")
        for task in tasks { await task.value }
        let events = await log.events
        XCTAssertEqual(events, (0 ..< 40).map { "\($0)" })
        let waiting = await lock.waiterCount("peer")
        XCTAssertEqual(waiting, 0)
    }

    /// Issue 18: a wait is cancellable. A cancelled waiter throws `cancelled` without running
    /// its body or holding the key; the waiters behind it are still served in order.
    func testACancelledWaiterStopsWaitingAndTheOthersAreStillServed() async throws {
        let lock = KeyedAsyncLock<String>()
        let log = Log()
        try await lock.acquire("peer")
        let cancelled = Task { () -> SessionError? in
            do {
                _ = try await lock.withLock("peer") { () async throws(SessionError) in await log.append("cancelled ran") }
                return nil
            } catch {
                return error as? SessionError
            }
        }
        while await lock.waiterCount("peer") < 1 { await Task.yield() }
        let after = Task { _ = try? await lock.withLock("peer") { () async throws(SessionError) in await log.append("after") } }
        while await lock.waiterCount("peer") < 2 { await Task.yield() }
        cancelled.cancel()
        let error = await cancelled.value
        XCTAssertEqual(error, .cancelled)
        XCTAssertEqual(SessionError.cancelled.disposition, .retry)
        let waiting = await lock.waiterCount("peer")
        XCTAssertEqual(waiting, 1)
        await lock.release("peer")
        await after.value
        let events = await log.events
        XCTAssertEqual(events, ["after"])
        let held = await lock.isHeld("peer")
        XCTAssertFalse(held)
    }

    func testADifferentKeyDoesNotWaitAndAThrowingHolderReleasesItsKey() async throws {
        let lock = KeyedAsyncLock<Int>()
        try await lock.acquire(1)
        let value = try await lock.withLock(2) { () async throws(SessionError) in 42 }
        XCTAssertEqual(value, 42, "key 2 was taken while key 1 is held")
        await lock.release(1)

        let result = await capture { () async throws(SessionError) -> Int in
            try await lock.withLock(3) { () async throws(SessionError) -> Int in throw .invalidMessage }
        }
        XCTAssertEqual(result.error, .invalidMessage)
        let held = await lock.isHeld(3)
        XCTAssertFalse(held)
    }

    // MARK: Managers

    /// Alice and Bob with an established session in both directions.
    private func connectedPair(seed: UInt64) async throws -> (TestDevice, TestDevice) {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: seed, server: server)
        let bob = try await TestDevice("bob", 1, seed: seed + 1, server: server)
        try await alice.startSession(with: bob.address, server: server)
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(utf8("hi"), to: bob.address), from: alice.address)
        _ = try await alice.manager.decrypt(try await bob.manager.encrypt(utf8("hello"), to: alice.address), from: bob.address)
        return (alice, bob)
    }

    func testConcurrentEncryptsToOnePeerUseEachMessageNumberOnce() async throws {
        let (alice, bob) = try await connectedPair(seed: 90)
        await alice.store.setYields(true)
        let count = 30
        let messages = await withTaskGroup(of: (Int, [UInt8]?).self) { group in
            for index in 0 ..< count {
                group.addTask { (index, try? await alice.manager.encrypt(plaintext(index), to: bob.address)) }
            }
            var messages: [(Int, [UInt8]?)] = []
            for await message in group { messages.append(message) }
            return messages
        }
        let ciphertexts = messages.compactMap(\.1)
        XCTAssertEqual(ciphertexts.count, count, "every encrypt succeeded")
        let headers = try ciphertexts.map { try RatchetMessage(serialized: $0) }
        XCTAssertEqual(Set(headers.map(\.ratchetKey)).count, 1, "one sending chain")
        XCTAssertEqual(headers.map(\.counter).sorted(), Array(0 ..< UInt32(count)), "a new chain after Bob's reply: numbers 0…29, none twice")

        var received: [[UInt8]] = []
        var generator = SplitMix64(seed: 91)
        for ciphertext in ciphertexts.shuffled(using: &generator) {
            received.append(try await bob.manager.decrypt(ciphertext, from: alice.address).plaintext)
        }
        XCTAssertEqual(Set(received), Set((0 ..< count).map { plaintext($0) }))
        XCTAssertEqual(received.count, count)
    }

    func testManyPeersTalkingToOneDeviceConcurrentlyLoseDuplicateAndReorderNothing() async throws {
        let server = FakeServer()
        let hub = try await TestDevice("hub", 1, seed: 100, server: server)
        var peers: [TestDevice] = []
        for user in 0 ..< 3 {
            for device: UInt32 in 1 ... 2 {
                peers.append(try await TestDevice("user\(user)", device, seed: 110 + UInt64(user * 10) + UInt64(device), server: server))
            }
        }
        await hub.store.setYields(true)
        for peer in peers {
            await peer.store.setYields(true)
            try await peer.startSession(with: hub.address, server: server)
        }
        let rounds = 25
        let hubAddress = hub.address
        // Per peer: one task sends to the hub, which decrypts in order; another has the hub
        // send to the peer, which decrypts in order. All tasks run at once.
        let results = try await withThrowingTaskGroup(of: (String, [[UInt8]], [[UInt8]]).self) { group in
            for (peerIndex, peer) in peers.enumerated() {
                group.addTask {
                    var sent: [[UInt8]] = []
                    var atHub: [[UInt8]] = []
                    for round in 0 ..< rounds {
                        let text = utf8("\(peerIndex) to hub \(round)")
                        let message = try await peer.manager.encrypt(text, to: hubAddress)
                        sent.append(message)
                        atHub.append(try await hub.manager.decrypt(message, from: peer.address).plaintext)
                    }
                    return ("up \(peerIndex)", sent, atHub)
                }
                group.addTask {
                    // Wait for the hub to have a session with this peer.
                    while await hub.base.loadSession(for: peer.address) == nil { await Task.yield() }
                    var sent: [[UInt8]] = []
                    var atPeer: [[UInt8]] = []
                    for round in 0 ..< rounds {
                        let message = try await hub.manager.encrypt(utf8("hub to \(peerIndex) \(round)"), to: peer.address)
                        sent.append(message)
                        atPeer.append(try await peer.manager.decrypt(message, from: hubAddress).plaintext)
                    }
                    return ("down \(peerIndex)", sent, atPeer)
                }
            }
            var results: [(String, [[UInt8]], [[UInt8]])] = []
            for try await result in group { results.append(result) }
            return results
        }
        XCTAssertEqual(results.count, 2 * peers.count)
        for (label, sent, received) in results {
            let parts = label.split(separator: " ")
            let expected = (0 ..< rounds).map { round in
                parts[0] == "up" ? utf8("\(parts[1]) to hub \(round)") : utf8("hub to \(parts[1]) \(round)")
            }
            XCTAssertEqual(received, expected, "\(label): every message once, in order")
            // Within each sending chain the message numbers run consecutively in send order.
            let headers = try sent.map { try IncomingMessage(serialized: $0).ratchetMessage }
            var lastCounter: [X25519.PublicKey: UInt32] = [:]
            for header in headers {
                if let last = lastCounter[header.ratchetKey] {
                    XCTAssertEqual(header.counter, last + 1, "\(label): chain numbers in order")
                }
                lastCounter[header.ratchetKey] = header.counter
            }
        }
    }
}

extension Result {
    /// The failure, or `nil`.
    var error: Failure? {
        guard case let .failure(error) = self else { return nil }
        return error
    }
}

/// Issue 18: the app's `beforePersisting` step for a prekey message ran under a process-wide
/// prekeys lock, so one slow step held up every new session. Now only the one-time prekey the
/// message names is locked: a second peer's prekey message completes while the first step runs.
final class PreKeyLockTests: XCTestCase {
    func testASlowStepForOnePreKeyMessageDoesNotHoldUpAnotherPeersNewSession() async throws {
        let server = FakeServer()
        let bob = try await TestDevice("bob", 1, seed: 8801, server: server)
        let alice = try await TestDevice("alice", 1, seed: 8802, server: server)
        let carol = try await TestDevice("carol", 1, seed: 8803, server: server)
        for peer in [alice, carol] { try await peer.startSession(with: bob.address, server: server) }
        let fromAlice = try await alice.manager.encrypt(utf8("alice"), to: bob.address)
        let fromCarol = try await carol.manager.encrypt(utf8("carol"), to: bob.address)

        let gate = Gate()
        let slow = Task {
            try await bob.manager.decrypt(fromAlice, from: alice.address, beforePersisting: { _ throws(SessionError) in
                await gate.enter()
                // Wait (bounded) for Carol's new session to complete meanwhile.
                for _ in 0 ..< 2_000 where await !gate.otherDone { try? await Task.sleep(nanoseconds: 5_000_000) }
                await gate.leave()
            })
        }
        while await !gate.entered { await Task.yield() }
        let atBob = try await bob.manager.decrypt(fromCarol, from: carol.address)
        await gate.finishOther()
        XCTAssertEqual(atBob.plaintext, utf8("carol"))
        let first = try await slow.value
        XCTAssertEqual(first.plaintext, utf8("alice"))
        let overlapped = await gate.otherFinishedInside
        XCTAssertTrue(overlapped, "Carol's session completed while Alice's step was still running")
    }
}

extension PreKeyLockTests {
    /// The documented limit of the re-entry check: a call from a detached task inside a step,
    /// for the same peer, waits for the outer call (it cannot be told apart from another
    /// caller); cancelling it ends the wait with `cancelled`, and the outer call completes.
    /// A detached call for another peer does not wait.
    func testADetachedCallFromInsideAStepWaitsForTheOuterCallAndCanBeCancelled() async throws {
        let server = FakeServer()
        let bob = try await TestDevice("bob", 1, seed: 8901, server: server)
        let alice = try await TestDevice("alice", 1, seed: 8902, server: server)
        let carol = try await TestDevice("carol", 1, seed: 8903, server: server)
        for peer in [alice, carol] {
            try await peer.startSession(with: bob.address, server: server)
            _ = try await bob.manager.decrypt(try await peer.manager.encrypt(utf8("hi"), to: bob.address), from: peer.address)
        }
        let message = try await alice.manager.encrypt(utf8("second"), to: bob.address)
        let outcome = Outcome()
        let received = try await bob.manager.decrypt(message, from: alice.address, beforePersisting: { _ throws(SessionError) in
            let manager = bob.manager
            let (aliceAddress, carolAddress) = (alice.address, carol.address)
            let otherPeer = Task.detached { try await manager.encrypt(Array("to carol".utf8), to: carolAddress) }
            await outcome.set(other: (try? await otherPeer.value) != nil)
            let samePeer = Task.detached { () -> SessionError? in
                do {
                    _ = try await manager.encrypt(Array("to alice".utf8), to: aliceAddress)
                    return nil
                } catch {
                    return error as? SessionError
                }
            }
            try? await Task.sleep(nanoseconds: 50_000_000)   // it waits for this call's peer lock
            samePeer.cancel()
            await outcome.set(same: await samePeer.value)
        })
        XCTAssertEqual(received.plaintext, utf8("second"))
        let (other, same) = await (outcome.other, outcome.same)
        XCTAssertEqual(other, true, "a call for another peer does not wait")
        XCTAssertEqual(same, .cancelled, "the same peer's call waited until cancelled")
    }
}

/// What the detached calls of the re-entry test ended with.
private actor Outcome {
    private(set) var other: Bool?
    private(set) var same: SessionError?
    func set(other: Bool) { self.other = other }
    func set(same: SessionError?) { self.same = same }
}

/// Coordinates the two decryptions of `PreKeyLockTests`.
private actor Gate {
    private(set) var entered = false
    private(set) var inside = false
    private(set) var otherDone = false
    private(set) var otherFinishedInside = false
    func enter() {
        entered = true
        inside = true
    }
    func leave() { inside = false }
    func finishOther() {
        otherDone = true
        otherFinishedInside = inside
    }
}
