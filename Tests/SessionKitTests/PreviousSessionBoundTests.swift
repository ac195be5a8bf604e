import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// The bound `SessionRecord` documents on the work a ratchet message can cause across previous
/// sessions (SPEC §3 "Sessions per address" lets an implementation bound it): a message whose
/// ratchet key no session knows is tried with a DH step only on the current session and on the
/// most recent previous one, and there only when header.pn equals that session's receiving
/// counter. A session "knows" a key when it is its DHr or skipped keys are stored under it.
final class PreviousSessionBoundTests: XCTestCase {
    private let aliceAddress = address("alice", 1)
    private let bobAddress = address("bob", 1)

    /// Bob, the responder, with prekeys and a record for Alice.
    private struct Bob {
        let identity: IdentityKeyPair
        var preKeys: LocalPreKeys
        /// The EK_A replay records, kept as a store keeps them (next to the prekeys).
        var baseKeyRecords = Set<BaseKeyRecord>()
        var record = SessionRecord()
        let random: SeededRandomSource
        let configuration: SessionConfiguration

        init(seed: UInt64, configuration: SessionConfiguration = .default) throws {
            random = SeededRandomSource(seed: seed)
            identity = try IdentityKeyPair(using: random)
            preKeys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 0), random: random)
            self.configuration = configuration
        }

        var bundle: PreKeyBundle {
            get throws { try XCTUnwrap(preKeys.bundle(identityKey: identity.publicKey, oneTimePreKeyID: nil)) }
        }

        mutating func receive(_ bytes: [UInt8]) throws -> SessionRecord.Decryption {
            let result = try record.decrypt(bytes, identity: identity, localAddress: address("bob", 1),
                                            remoteAddress: address("alice", 1), preKeys: preKeys.lookup(recording: baseKeyRecords), configuration: configuration, random: random)
            if let consumption = result.consumption {
                try preKeys.apply(consumption)
                baseKeyRecords.insert(BaseKeyRecord(signedPreKeyID: consumption.signedPreKeyID, baseKey: consumption.baseKey))
            }
            return result
        }

        /// What a failure must not change.
        var snapshot: [UInt8] { record.serialized() + preKeys.serialized() + u32(UInt32(random.drawCount)) + u32(UInt32(baseKeyRecords.count)) }
    }

    private let aliceIdentity = try? IdentityKeyPair(using: SeededRandomSource(seed: 4000))
    private let aliceRandom = SeededRandomSource(seed: 4001)

    /// A new initiator session of Alice's from Bob's bundle.
    private func aliceSession(to bob: Bob) throws -> SessionState {
        try SessionState(initiatingWith: bob.bundle, identity: try XCTUnwrap(aliceIdentity), localAddress: aliceAddress,
                         remoteAddress: bobAddress, kem: nil, random: aliceRandom)
    }

    private func assertRefused(_ bytes: [UInt8], by bob: inout Bob, with expected: SessionError, _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        let before = bob.snapshot
        XCTAssertThrowsError(try bob.receive(bytes), what, file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, what, file: file, line: line)
        }
        XCTAssertEqual(bob.snapshot, before, "\(what): the record changed", file: file, line: line)
    }

    /// A ratchet message with the given header and a ciphertext nobody can open.
    private func forged(ratchetKey: [UInt8], pn: UInt32, n: UInt32) -> [UInt8] {
        [0x21] + ratchetKey + u32(pn) + u32(n) + [UInt8](repeating: 0xA5, count: 80)
    }

    func testWithFortyPreviousSessionsAForgedMessageOnAnUnknownKeyFailsAndChangesNothing() throws {
        var bob = try Bob(seed: 4010)
        var inFlight: [[UInt8]] = []
        for index in 0 ... ProtocolLimits.maxPreviousSessions {
            // Each session gets a reply, then Alice sends two messages on her next ratchet key,
            // of which Bob reads the second: his session keeps the first one's key.
            var session = try aliceSession(to: bob)
            XCTAssertTrue(try bob.receive(session.encrypt(plaintext(index))).establishedSession)
            _ = try session.decrypt(IncomingMessage(serialized: bob.record.encrypt(utf8("reply"))), random: aliceRandom)
            let pair = try (0 ..< 2).map { _ in try session.encrypt(plaintext(100 + index)) }
            XCTAssertEqual(try bob.receive(pair[1]).plaintext, plaintext(100 + index))
            inFlight.append(pair[0])
        }
        XCTAssertEqual(bob.record.previousSessions.count, 40)
        XCTAssertEqual(bob.record.previousSessions.first?.ratchet.receiveCounter, 2)
        let unknownKey = try X25519.PrivateKey(using: SeededRandomSource(seed: 4011)).publicKey.rawRepresentation
        // pn = 2 equals the most recent previous session's receiving counter, so it too takes
        // the DH step; with pn = 0 only the current session does. No other session is tried.
        for pn: UInt32 in [0, 2] {
            assertRefused(forged(ratchetKey: unknownKey, pn: pn, n: 0), by: &bob, with: .invalidMessage, "forged, pn \(pn)")
        }
        // A session that knows a message's ratchet key decrypts it wherever it is among the 41.
        for index in [40, 0, 20, 39] {
            let result = try bob.receive(inFlight[index])
            XCTAssertEqual(result.plaintext, plaintext(100 + index))
            XCTAssertEqual(result.promotedPreviousSession, index != 40, "session \(index)")
        }
    }

    /// Alice's first session A1 got a reply and moved to a new ratchet key; its message on that
    /// key needs one DH step in Bob's B1. With B1 the most recent previous session (pn equal to
    /// its Nr) that step is taken and B1 becomes current again; once B1 is older, it is not:
    /// this is the documented bound, and the message is refused, changing nothing.
    func testAMessageNeedingADHStepDecryptsInTheMostRecentPreviousSessionButNotInAnOlderOne() throws {
        var bob = try Bob(seed: 4020)
        var first = try aliceSession(to: bob)
        _ = try bob.receive(first.encrypt(utf8("a1")))
        _ = try first.decrypt(IncomingMessage(serialized: bob.record.encrypt(utf8("b1"))), random: aliceRandom)
        let onNewKey = try first.encrypt(utf8("on A1's new ratchet key"))
        let header = try RatchetMessage(serialized: onNewKey)
        XCTAssertEqual(header.previousCounter, 1)
        XCTAssertEqual(bob.record.currentSession?.ratchet.receiveCounter, 1, "pn = Nr: no key is skipped on B1's old chain")

        var second = try aliceSession(to: bob)
        _ = try bob.receive(second.encrypt(utf8("a2")))
        let withB1MostRecent = bob.record
        var third = try aliceSession(to: bob)
        _ = try bob.receive(third.encrypt(utf8("a3")))
        XCTAssertEqual(bob.record.previousSessions.map(\.baseKey), [second.baseKey, first.baseKey])

        assertRefused(onNewKey, by: &bob, with: .invalidMessage, "a DH step in the second most recent previous session")

        bob.record = withB1MostRecent
        let result = try bob.receive(onNewKey)
        XCTAssertEqual(result.plaintext, utf8("on A1's new ratchet key"))
        XCTAssertTrue(result.promotedPreviousSession)
        XCTAssertEqual(bob.record.currentSession?.baseKey, first.baseKey)
    }

    /// In the most recent previous session, a DH step that would skip keys on its old chain
    /// (pn ≠ Nr) is not taken either; once the missing message has arrived (a prekey message,
    /// matched to its session by EK_A and promoting it), the message decrypts.
    func testTheMostRecentPreviousSessionTakesNoDHStepThatWouldSkipKeys() throws {
        var bob = try Bob(seed: 4030)
        var first = try aliceSession(to: bob)
        _ = try bob.receive(first.encrypt(utf8("a1 #0")))
        let missing = try first.encrypt(utf8("a1 #1, delayed"))
        _ = try first.decrypt(IncomingMessage(serialized: bob.record.encrypt(utf8("b1"))), random: aliceRandom)
        let onNewKey = try first.encrypt(utf8("on the new key"))
        XCTAssertEqual(try RatchetMessage(serialized: onNewKey).previousCounter, 2)
        var second = try aliceSession(to: bob)
        _ = try bob.receive(second.encrypt(utf8("a2")))
        XCTAssertEqual(bob.record.previousSessions.first?.ratchet.receiveCounter, 1)

        assertRefused(onNewKey, by: &bob, with: .invalidMessage, "pn 2 ≠ Nr 1 in the most recent previous session")
        XCTAssertTrue(try bob.receive(missing).promotedPreviousSession)
        let result = try bob.receive(onNewKey)
        XCTAssertEqual(result.plaintext, utf8("on the new key"))
        XCTAssertFalse(result.promotedPreviousSession, "B1 is already current")
    }

    /// B1 holds skipped keys under a ratchet key k that is no longer its DHr. B1 is an older
    /// previous session, so no DH step would be tried there, but it knows k: a message on k
    /// decides there, whatever its counter. A genuine one decrypts from its skipped key and
    /// promotes B1; a forged one gets B1's error (`invalidMessage`) and not the current
    /// session's (`tooManySkippedMessages`, which a forgery on an unknown key gets).
    func testASessionKnowsARatchetKeyUnderWhichItHoldsSkippedKeysWhateverTheCounter() throws {
        let configuration = try SessionConfiguration(maxSkip: 4, maxStored: 20)
        var bob = try Bob(seed: 4040, configuration: configuration)
        var first = try aliceSession(to: bob)
        _ = try bob.receive(first.encrypt(utf8("a1")))
        _ = try first.decrypt(IncomingMessage(serialized: bob.record.encrypt(utf8("b1"))), random: aliceRandom)
        // Alice's key k: three messages, Bob reads only the third (keys 0 and 1 are stored).
        let onK = try (0 ..< 3).map { try first.encrypt(plaintext(10 + $0)) }
        let k = try RatchetMessage(serialized: onK[0]).ratchetKey
        XCTAssertEqual(try bob.receive(onK[2]).plaintext, plaintext(12))
        // Bob replies, Alice moves on to k'; Bob reads five messages on k' in order.
        _ = try first.decrypt(IncomingMessage(serialized: bob.record.encrypt(utf8("b2"))), random: aliceRandom)
        for index in 0 ..< 5 { _ = try bob.receive(try first.encrypt(plaintext(20 + index))) }
        let b1 = try XCTUnwrap(bob.record.currentSession)
        XCTAssertNotEqual(b1.ratchet.remoteRatchetKey, k, "k is not B1's DHr any more")
        XCTAssertTrue(b1.ratchet.skippedKeys.holdsKeys(for: k))
        XCTAssertEqual(b1.ratchet.receiveCounter, 5)

        for index in 0 ..< 2 {
            var session = try aliceSession(to: bob)
            _ = try bob.receive(session.encrypt(utf8("newer \(index)")))
        }
        XCTAssertEqual(bob.record.previousSessions.count, 2)
        XCTAssertEqual(bob.record.previousSessions.last?.baseKey, first.baseKey, "B1 is the older previous session")
        XCTAssertEqual(bob.record.currentSession?.ratchet.receiveCounter, 1)

        // pn = 6: for the current session (Nr = 1, MAX_SKIP = 4) that is too many to skip; for
        // B1 (Nr = 5 on k') it is not.
        let unknown = try X25519.PrivateKey(using: SeededRandomSource(seed: 4041)).publicKey.rawRepresentation
        assertRefused(forged(ratchetKey: unknown, pn: 6, n: 3), by: &bob, with: .tooManySkippedMessages, "unknown key: the current session's error")
        assertRefused(forged(ratchetKey: k.rawRepresentation, pn: 6, n: 3), by: &bob, with: .invalidMessage,
                      "k at a counter with no stored key: B1 decides")
        assertRefused(forged(ratchetKey: k.rawRepresentation, pn: 6, n: 0), by: &bob, with: .invalidMessage,
                      "k at a stored counter, forged: B1 decides and keeps its key")

        let result = try bob.receive(onK[0])
        XCTAssertEqual(result.plaintext, plaintext(10))
        XCTAssertTrue(result.promotedPreviousSession)
        XCTAssertEqual(bob.record.currentSession?.baseKey, first.baseKey)
        XCTAssertEqual(try bob.receive(onK[1]).plaintext, plaintext(11))
    }

    /// Simultaneous initiation through two managers: both process each other's bundles at the
    /// same time and exchange prekey messages; the first ratchet message each way needs one DH
    /// step in the receiver's most recent previous session (pn equal to its Nr), which becomes
    /// current, and from then on both talk on one session.
    func testTwoManagersThatStartSessionsWithEachOtherAtTheSameTimeConvergeOnOneSession() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 4050, server: server)
        let bob = try await TestDevice("bob", 1, seed: 4051, server: server)
        let bundleOfBob = try await server.requireBundle(for: bob.address)
        let bundleOfAlice = try await server.requireBundle(for: alice.address)
        async let aliceStarts: Void = alice.manager.processBundle(bundleOfBob, for: bob.address)
        async let bobStarts: Void = bob.manager.processBundle(bundleOfAlice, for: alice.address)
        _ = try await (aliceStarts, bobStarts)
        let fromAlice = try await alice.manager.encrypt(utf8("hi bob"), to: bob.address)
        let fromBob = try await bob.manager.encrypt(utf8("hi alice"), to: alice.address)
        XCTAssertEqual([fromAlice[0], fromBob[0]], [0x22, 0x22])
        let atBob = try await bob.manager.decrypt(fromAlice, from: alice.address)
        let atAlice = try await alice.manager.decrypt(fromBob, from: bob.address)
        XCTAssertEqual([atBob.plaintext, atAlice.plaintext], [utf8("hi bob"), utf8("hi alice")])
        XCTAssertTrue(atBob.establishedSession && atAlice.establishedSession)

        // Alice replies on the session Bob started (now her current one).
        let aliceAgain = try await alice.manager.encrypt(utf8("again"), to: bob.address)
        XCTAssertEqual(aliceAgain[0], 0x21)
        let storedAtAlice = await alice.base.loadSession(for: bob.address)
        let aliceRecord = try XCTUnwrap(storedAtAlice)
        let aliceCurrent = try XCTUnwrap(aliceRecord.currentSession)
        XCTAssertEqual(aliceCurrent.role, .responder)
        XCTAssertEqual(try RatchetMessage(serialized: aliceAgain).previousCounter, 0)
        let again = try await bob.manager.decrypt(aliceAgain, from: alice.address)
        XCTAssertEqual(again.plaintext, utf8("again"))
        let storedAtBob = await bob.base.loadSession(for: alice.address)
        let bobRecord = try XCTUnwrap(storedAtBob)
        let bobCurrent = try XCTUnwrap(bobRecord.currentSession)
        XCTAssertEqual(bobCurrent.role, .initiator, "Bob's own session, promoted from the previous ones")
        XCTAssertEqual(bobCurrent.baseKey, aliceCurrent.baseKey, "both sides on the session Bob started")

        for round in 0 ..< 3 {
            let reply = try await bob.manager.encrypt(plaintext(round), to: alice.address)
            XCTAssertEqual(reply[0], 0x21, "Bob's session has decrypted a reply: no more prekey messages")
            let atAliceAgain = try await alice.manager.decrypt(reply, from: bob.address)
            XCTAssertEqual(atAliceAgain.plaintext, plaintext(round))
            let next = try await alice.manager.encrypt(plaintext(100 + round), to: bob.address)
            let atBobAgain = try await bob.manager.decrypt(next, from: alice.address)
            XCTAssertEqual(atBobAgain.plaintext, plaintext(100 + round))
            let aliceNow = await alice.base.loadSession(for: bob.address)?.currentSession?.baseKey
            let bobNow = await bob.base.loadSession(for: alice.address)?.currentSession?.baseKey
            XCTAssertEqual(aliceNow, bobCurrent.baseKey, "round \(round): converged")
            XCTAssertEqual(bobNow, bobCurrent.baseKey, "round \(round): converged")
        }
    }
}
