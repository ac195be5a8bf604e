import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// `SessionRecord`: the current session and up to 40 previous ones per peer device, the
/// routing of prekey and ratchet messages between them, promotion, archiving, transactions,
/// and the record's persisted form.
final class SessionRecordTests: XCTestCase {
    /// Bob (the responder) with prekeys; Alice's sessions are plain `SessionState`s.
    private struct Responder {
        let identity: IdentityKeyPair
        let address: ProtocolAddress
        /// Who its record is for (whose messages it receives).
        let peer: ProtocolAddress
        var preKeys: LocalPreKeys
        /// The EK_A replay records, kept as a store keeps them (next to the prekeys).
        var baseKeyRecords = Set<BaseKeyRecord>()
        var record = SessionRecord()
        let random: SeededRandomSource

        init(seed: UInt64, address: ProtocolAddress = SessionRecordTests.bobAddress, peer: ProtocolAddress = SessionRecordTests.aliceAddress) throws {
            random = SeededRandomSource(seed: seed)
            identity = try IdentityKeyPair(using: random)
            self.address = address
            self.peer = peer
            preKeys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 0), random: random)
        }

        func bundle(oneTimePreKeyID: UInt32?) throws -> PreKeyBundle {
            try XCTUnwrap(preKeys.bundle(identityKey: identity.publicKey, oneTimePreKeyID: oneTimePreKeyID))
        }

        /// Decrypts and, like a store's commit, applies what X3DH consumed (deletes the
        /// one-time prekey, records EK_A).
        mutating func receive(_ bytes: [UInt8]) throws -> SessionRecord.Decryption {
            let result = try record.decrypt(bytes, identity: identity, localAddress: address, remoteAddress: peer, preKeys: preKeys.lookup(recording: baseKeyRecords),
                                            random: random)
            if let consumption = result.consumption {
                try preKeys.apply(consumption)
                baseKeyRecords.insert(BaseKeyRecord(signedPreKeyID: consumption.signedPreKeyID, baseKey: consumption.baseKey))
            }
            return result
        }

        /// Starts an initiator session with `other` from its bundle and makes it current.
        mutating func initiate(with other: Responder, oneTimePreKeyID: UInt32?) throws {
            try record.promote(try SessionState(initiatingWith: other.bundle(oneTimePreKeyID: oneTimePreKeyID), identity: identity,
                                            localAddress: address, remoteAddress: other.address, kem: nil, random: random))
        }

        /// The record, prekeys and randomness draws: what a failure must not change.
        var snapshot: [UInt8] {
            record.serialized() + preKeys.serialized() + [UInt8(truncatingIfNeeded: random.drawCount), UInt8(truncatingIfNeeded: baseKeyRecords.count)]
        }
    }

    static let aliceAddress = address("alice", 1)
    static let bobAddress = address("bob", 1)
    private let aliceRandom = SeededRandomSource(seed: 700)

    private func aliceSession(_ bob: Responder, identity: IdentityKeyPair, oneTimePreKeyID: UInt32?) throws -> SessionState {
        try SessionState(initiatingWith: bob.bundle(oneTimePreKeyID: oneTimePreKeyID), identity: identity,
                         localAddress: Self.aliceAddress, remoteAddress: bob.address, kem: nil, random: aliceRandom)
    }

    private func assertFailsUnchanged(
        _ expected: SessionError, _ bob: inout Responder, _ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line
    ) {
        let before = bob.snapshot
        XCTAssertThrowsError(try bob.receive(bytes), file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, file: file, line: line)
        }
        XCTAssertEqual(bob.snapshot, before, "a failed decryption changed the record", file: file, line: line)
    }

    // MARK: Routing

    func testAFirstPrekeyMessageEstablishesTheCurrentSessionAndReportsTheOneTimePreKey() throws {
        var bob = try Responder(seed: 1)
        let alice = try IdentityKeyPair(using: aliceRandom)
        var session = try aliceSession(bob, identity: alice, oneTimePreKeyID: 5)
        let result = try bob.receive(session.encrypt(utf8("one")))
        XCTAssertEqual(result.plaintext, utf8("one"))
        XCTAssertEqual(result.consumption?.oneTimePreKeyID, 5)
        XCTAssertEqual(result.consumption?.signedPreKeyID, 1)
        XCTAssertEqual(result.consumption?.baseKey, session.baseKey)
        XCTAssertNil(result.consumption?.oneTimeKEMPreKeyID)
        XCTAssertEqual(bob.baseKeyRecords, [BaseKeyRecord(signedPreKeyID: 1, baseKey: session.baseKey)], "EK_A recorded under the signed prekey")
        XCTAssertTrue(result.establishedSession)
        XCTAssertFalse(result.promotedPreviousSession)
        XCTAssertEqual(result.remoteIdentityKey, alice.publicKey)
        XCTAssertEqual(bob.record.remoteIdentityKey, alice.publicKey)
        XCTAssertTrue(bob.record.previousSessions.isEmpty)

        let second = try bob.receive(session.encrypt(utf8("two")))
        XCTAssertFalse(second.establishedSession, "the same EK_A reuses the session")
        XCTAssertNil(second.consumption)
        XCTAssertEqual(second.plaintext, utf8("two"))
    }

    func testANewSessionArchivesTheOldOneWhosePrekeyMessagesStillDecryptWithoutPrekeysAndPromoteIt() throws {
        var bob = try Responder(seed: 2)
        let alice = try IdentityKeyPair(using: aliceRandom)
        var first = try aliceSession(bob, identity: alice, oneTimePreKeyID: 1)
        let firstMessages = try (0 ..< 3).map { try first.encrypt(plaintext($0)) }
        XCTAssertEqual(try bob.receive(firstMessages[0]).plaintext, plaintext(0))

        var second = try aliceSession(bob, identity: alice, oneTimePreKeyID: 2)
        let established = try bob.receive(second.encrypt(utf8("new session")))
        XCTAssertTrue(established.establishedSession)
        XCTAssertEqual(bob.record.previousSessions.count, 1)
        XCTAssertEqual(bob.record.currentSession?.baseKey, second.baseKey)
        XCTAssertEqual(bob.record.previousSessions.first?.baseKey, first.baseKey)

        // The first session's later prekey message: found among the previous sessions, so no
        // prekey is needed (the one-time prekey 1 is gone) and it becomes current again.
        let promoted = try bob.record.decrypt(firstMessages[2], identity: bob.identity, localAddress: bob.address,
                                              remoteAddress: Self.aliceAddress, preKeys: PreKeySet(), random: bob.random)
        XCTAssertEqual(promoted.plaintext, plaintext(2))
        XCTAssertTrue(promoted.promotedPreviousSession)
        XCTAssertFalse(promoted.establishedSession)
        XCTAssertNil(promoted.consumption)
        XCTAssertEqual(bob.record.previousSessions.count, 1, "the sessions swapped places")
        // Replies now go to the first session.
        let reply = try bob.record.encrypt(utf8("to the first session"))
        XCTAssertEqual(try first.decrypt(IncomingMessage(serialized: reply), random: aliceRandom), utf8("to the first session"))
        XCTAssertThrowsError(try second.decrypt(IncomingMessage(serialized: reply), random: aliceRandom))
        XCTAssertEqual(try bob.receive(firstMessages[1]).plaintext, plaintext(1))
    }

    func testARatchetMessageOfAPreviousSessionDecryptsAndPromotesIt() throws {
        var bob = try Responder(seed: 3)
        let alice = try IdentityKeyPair(using: aliceRandom)
        var first = try aliceSession(bob, identity: alice, oneTimePreKeyID: 1)
        _ = try bob.receive(first.encrypt(utf8("hello")))
        _ = try first.decrypt(IncomingMessage(serialized: bob.record.encrypt(utf8("reply"))), random: aliceRandom)
        let ratchetMessages = try (0 ..< 2).map { try first.encrypt(plaintext(10 + $0)) }
        XCTAssertEqual(ratchetMessages[0].first, WireType.ratchetMessage)

        var second = try aliceSession(bob, identity: alice, oneTimePreKeyID: nil)
        XCTAssertTrue(try bob.receive(second.encrypt(utf8("second"))).establishedSession)
        let result = try bob.receive(ratchetMessages[1])
        XCTAssertEqual(result.plaintext, plaintext(11))
        XCTAssertTrue(result.promotedPreviousSession)
        XCTAssertEqual(try bob.receive(ratchetMessages[0]).plaintext, plaintext(10), "skipped keys survive archiving")
    }

    func testSimultaneousInitiationConvergesOnOneSessionPair() throws {
        var alice = try Responder(seed: 4, address: Self.aliceAddress, peer: Self.bobAddress)
        var bob = try Responder(seed: 5, address: Self.bobAddress, peer: Self.aliceAddress)
        try alice.initiate(with: bob, oneTimePreKeyID: 1)
        try bob.initiate(with: alice, oneTimePreKeyID: 1)
        let fromAlice = try alice.record.encrypt(utf8("hi bob"))
        let fromBob = try bob.record.encrypt(utf8("hi alice"))
        XCTAssertEqual(try bob.receive(fromAlice).plaintext, utf8("hi bob"))
        XCTAssertEqual(try alice.receive(fromBob).plaintext, utf8("hi alice"))
        // Each now sends on the session the other started; the receiver finds its own
        // initiator session among the previous ones and promotes it.
        let aliceAgain = try alice.record.encrypt(utf8("again"))
        let atBob = try bob.receive(aliceAgain)
        XCTAssertTrue(atBob.promotedPreviousSession)
        for round in 0 ..< 3 {
            XCTAssertEqual(try alice.receive(bob.record.encrypt(plaintext(round))).plaintext, plaintext(round))
            let reply = try bob.receive(alice.record.encrypt(plaintext(100 + round)))
            XCTAssertEqual(reply.plaintext, plaintext(100 + round))
            XCTAssertFalse(reply.promotedPreviousSession, "converged: the current sessions pair up")
        }
    }

    // MARK: Archive bound

    func testFortyPreviousSessionsAreKeptAndTheOldestIsDropped() throws {
        var bob = try Responder(seed: 6)
        let alice = try IdentityKeyPair(using: aliceRandom)
        var sessions: [SessionState] = []
        var pending: [[UInt8]] = []
        for index in 0 ..< ProtocolLimits.maxPreviousSessions + 2 {
            var session = try aliceSession(bob, identity: alice, oneTimePreKeyID: UInt32(index + 1))
            XCTAssertTrue(try bob.receive(session.encrypt(utf8("first"))).establishedSession)
            pending.append(try session.encrypt(plaintext(index)))
            sessions.append(session)
        }
        XCTAssertEqual(bob.record.previousSessions.count, 40)
        // Session 0 was dropped: its prekey message needs X3DH again, and its EK_A is on record
        // under the signed prekey (SPEC §3's replay record, looked up before the one-time
        // prekey, which is gone too).
        assertFailsUnchanged(.duplicateMessage, &bob, pending[0])
        // Session 1 is the oldest kept.
        XCTAssertEqual(try bob.receive(pending[1]).plaintext, plaintext(1))
        XCTAssertEqual(bob.record.previousSessions.count, 40)
    }

    // MARK: Transactions and errors

    func testFailuresLeaveTheRecordByteForByteUnchanged() throws {
        var bob = try Responder(seed: 7)
        let alice = try IdentityKeyPair(using: aliceRandom)
        let bundleWithOneTimePreKey1 = try bob.bundle(oneTimePreKeyID: 1)
        var first = try aliceSession(bob, identity: alice, oneTimePreKeyID: 1)
        let firstMessage = try first.encrypt(utf8("one"))
        _ = try bob.receive(firstMessage)
        _ = try first.decrypt(IncomingMessage(serialized: bob.record.encrypt(utf8("reply"))), random: aliceRandom)
        let ratchetMessage = try first.encrypt(utf8("ratchet"))
        var second = try aliceSession(bob, identity: alice, oneTimePreKeyID: 2)
        _ = try bob.receive(second.encrypt(utf8("second")))
        _ = try bob.receive(ratchetMessage)

        // The replay of a previous session's message is a duplicate, reported as such even
        // though the current session does not know its ratchet key.
        var third = try aliceSession(bob, identity: alice, oneTimePreKeyID: 3)
        _ = try bob.receive(third.encrypt(utf8("third")))
        assertFailsUnchanged(.duplicateMessage, &bob, ratchetMessage)
        // The replayed first prekey message names a chain that session has ratcheted past
        // ("some error", SPEC §4): its keys are gone, but its EK_A names the session, so the
        // replay is recognised (issue 18: it was invalidMessage, "forged").
        assertFailsUnchanged(.duplicateMessage, &bob, firstMessage)
        // Tampering, garbage, prekeys not held.
        assertFailsUnchanged(.invalidMessage, &bob, flipped(try third.encrypt(utf8("x")), at: 120))
        assertFailsUnchanged(.unsupportedVersion, &bob, [0x07] + Array(repeating: 0, count: 80))
        assertFailsUnchanged(.invalidMessage, &bob, [])
        var stale = try SessionState(initiatingWith: bundleWithOneTimePreKey1, identity: alice, localAddress: Self.aliceAddress,
                                     remoteAddress: bob.address, kem: nil, random: aliceRandom)
        assertFailsUnchanged(.unknownPreKey, &bob, try stale.encrypt(utf8("opk 1 is consumed")))
        // A message from a stranger's session: nobody recognises its ratchet key.
        var strangerBob = try Responder(seed: 8)
        var strangerSession = try aliceSession(strangerBob, identity: alice, oneTimePreKeyID: 1)
        _ = try strangerBob.receive(strangerSession.encrypt(utf8("x")))
        _ = try strangerSession.decrypt(IncomingMessage(serialized: strangerBob.record.encrypt(utf8("y"))), random: aliceRandom)
        assertFailsUnchanged(.invalidMessage, &bob, try strangerSession.encrypt(utf8("not for bob")))
    }

    func testWithoutAnySessionARatchetMessageIsNoSessionAndEncryptIsNoSession() throws {
        var bob = try Responder(seed: 9)
        let alice = try IdentityKeyPair(using: aliceRandom)
        var session = try aliceSession(bob, identity: alice, oneTimePreKeyID: nil)
        var responder = try Responder(seed: 9)
        _ = try responder.receive(session.encrypt(utf8("a")))
        _ = try session.decrypt(IncomingMessage(serialized: responder.record.encrypt(utf8("b"))), random: aliceRandom)
        assertFailsUnchanged(.noSession, &bob, try session.encrypt(utf8("c")))
        XCTAssertThrowsError(try bob.record.encrypt(utf8("d"))) { XCTAssertEqual($0 as? SessionError, .noSession) }
        XCTAssertTrue(bob.record.isEmpty)
    }

    func testAnArchivedCurrentSessionStillDecryptsButNoLongerSends() throws {
        var bob = try Responder(seed: 10)
        let alice = try IdentityKeyPair(using: aliceRandom)
        var session = try aliceSession(bob, identity: alice, oneTimePreKeyID: 4)
        _ = try bob.receive(session.encrypt(utf8("a")))
        let inFlight = try session.encrypt(utf8("b"))
        bob.record.archiveCurrentSession()
        XCTAssertNil(bob.record.currentSession)
        XCTAssertThrowsError(try bob.record.encrypt(utf8("c"))) { XCTAssertEqual($0 as? SessionError, .noSession) }
        let result = try bob.receive(inFlight)
        XCTAssertEqual(result.plaintext, utf8("b"))
        XCTAssertTrue(result.promotedPreviousSession)
        XCTAssertNoThrow(try bob.record.encrypt(utf8("c")))
    }

    /// Reading of SPEC §3–§4 (pinned here): only responder sessions are matched by EK_A, so a
    /// prekey message that reaches its own initiator (its prefix reflected back) is not taken
    /// by the initiator session; it goes to X3DH, which finds no prekeys: `unknownPreKey`.
    func testAPrekeyMessageReflectedToItsInitiatorIsUnknownPreKeyAndChangesNothing() throws {
        let bob = try Responder(seed: 12)
        var alice = try Responder(seed: 13, address: Self.aliceAddress, peer: Self.bobAddress)
        try alice.initiate(with: bob, oneTimePreKeyID: nil)
        let own = try alice.record.encrypt(utf8("to bob"))
        XCTAssertEqual(own[0], WireType.preKeyMessage)
        // Alice holds no prekeys (as an initiator need not): her own EK_A does not route the
        // message to her initiator session, and X3DH finds no signed prekey.
        let before = alice.record.serialized()
        XCTAssertThrowsError(try alice.record.decrypt(
            own, identity: alice.identity, localAddress: alice.address, remoteAddress: bob.address, preKeys: PreKeySet(),
            random: alice.random)) { XCTAssertEqual($0 as? SessionError, .unknownPreKey) }
        XCTAssertEqual(alice.record.serialized(), before)
    }

    /// Reading of SPEC §3 (pinned here): with no current session, a ratchet message that no
    /// session knows and that no bounded DH step decrypts is `noSession` — "the current
    /// session's error, noSession when there is none" — not a previous session's error.
    func testWithoutACurrentSessionAnUnknownRatchetKeyIsNoSession() throws {
        var bob = try Responder(seed: 14)
        let alice = try IdentityKeyPair(using: aliceRandom)
        var session = try aliceSession(bob, identity: alice, oneTimePreKeyID: nil)
        _ = try bob.receive(session.encrypt(utf8("a")))
        _ = try session.decrypt(IncomingMessage(serialized: bob.record.encrypt(utf8("b"))), random: aliceRandom)
        bob.record.archiveCurrentSession()
        // A ratchet message (Alice has had a reply) on a fresh ratchet key, with pn ≠ the
        // archived session's receiving counter (1): no session knows the key, none may try it.
        var forged = try session.encrypt(utf8("c"))
        XCTAssertEqual(forged[0], WireType.ratchetMessage)
        forged.replaceSubrange(1 ..< 33, with: try X25519.PrivateKey(using: aliceRandom).publicKey.rawRepresentation)
        forged.replaceSubrange(33 ..< 37, with: [0, 0, 0, 9])
        assertFailsUnchanged(.noSession, &bob, forged)
    }

    // MARK: Persistence

    private func sealed(_ body: [UInt8]) -> [UInt8] { body + SHA256.hash(body).prefix(16) }

    private func assertRecordFails(_ blob: [UInt8], _ expected: SessionError, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try SessionRecord(serialized: blob), message, file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, message, file: file, line: line)
        }
    }

    /// Bob's record after two of Alice's sessions, with messages of both still in flight.
    private func midConversation() throws -> (Responder, first: SessionState, second: SessionState, inFlight: [[UInt8]]) {
        var bob = try Responder(seed: 11)
        let alice = try IdentityKeyPair(using: aliceRandom)
        var first = try aliceSession(bob, identity: alice, oneTimePreKeyID: 1)
        let early = try (0 ..< 4).map { try first.encrypt(plaintext($0)) }
        _ = try bob.receive(early[3])
        var second = try aliceSession(bob, identity: alice, oneTimePreKeyID: 2)
        let late = try (0 ..< 3).map { try second.encrypt(plaintext(10 + $0)) }
        _ = try bob.receive(late[2])
        return (bob, first, second, [early[0], early[2], late[0], late[1]])
    }

    func testARecordSavedMidConversationRestoresAndContinues() throws {
        var (bob, first, second, inFlight) = try midConversation()
        let blob = bob.record.serialized()
        bob.record = try SessionRecord(serialized: blob)
        XCTAssertEqual(bob.record.serialized(), blob)
        XCTAssertEqual(bob.record.previousSessions.count, 1)
        for (message, expected) in zip(inFlight, [0, 2, 10, 11]) {
            XCTAssertEqual(try bob.receive(message).plaintext, plaintext(expected))
        }
        let reply = try bob.record.encrypt(utf8("reply"))
        // The last message decrypted was from the second session, which is current.
        XCTAssertEqual(try second.decrypt(IncomingMessage(serialized: reply), random: aliceRandom), utf8("reply"))
        XCTAssertThrowsError(try first.decrypt(IncomingMessage(serialized: reply), random: aliceRandom))
    }

    func testPromotingASessionTheRecordHoldsMovesItAndTheRecordStillLoads() throws {
        let alice = try IdentityKeyPair(using: aliceRandom)
        let bob = try Responder(seed: 41)
        let first = try aliceSession(bob, identity: alice, oneTimePreKeyID: nil)
        let second = try aliceSession(bob, identity: alice, oneTimePreKeyID: nil)
        var record = SessionRecord()
        try record.promote(first)
        try record.promote(second)
        try record.promote(first)    // the archived first session becomes current again
        try record.promote(first)    // promoting the current session changes nothing
        XCTAssertEqual(record.previousSessions.count, 1)
        XCTAssertEqual(record.currentSession?.baseKey, first.baseKey)
        XCTAssertEqual(record.previousSessions.first?.baseKey, second.baseKey)
        let blob = record.serialized()
        XCTAssertEqual(try SessionRecord(serialized: blob).serialized(), blob)
    }

    func testAnEmptyRecordRoundTrips() throws {
        let blob = SessionRecord().serialized()
        XCTAssertEqual(blob.count, 6 + 1 + 4 + 1 + 1 + 16)
        XCTAssertTrue(try SessionRecord(serialized: blob).isEmpty)
    }

    func testEveryTruncationAndEveryAlteredByteOfARecordIsInvalidPayload() throws {
        let blob = try midConversation().0.record.serialized()
        for length in 0 ..< blob.count { assertRecordFails(Array(blob.prefix(length)), .invalidPayload, "length \(length)") }
        for index in blob.indices {
            var altered = blob
            altered[index] ^= 0x10
            assertRecordFails(altered, .invalidPayload, "byte \(index)")
        }
    }

    func testInconsistentRecordsAreRefused() throws {
        let (bob, _, _, _) = try midConversation()
        let current = try XCTUnwrap(bob.record.currentSession)
        let previous = try XCTUnwrap(bob.record.previousSessions.first)
        func body(_ session: SessionState) -> [UInt8] {
            var writer = StateWriter(kind: .sessionRecord, version: 5)
            session.encode(into: &writer)
            return Array(writer.finish().dropFirst(6).dropLast(16))
        }
        // A version-4 session body: without the skipped keys' times (the last u64 each).
        func bodyV4(_ session: SessionState) -> [UInt8] { Array(body(session).dropLast(8 * session.ratchet.skippedKeys.count)) }
        let header = Array("SKST".utf8) + [StateKind.sessionRecord.rawValue, 5]
        // Version 5: the sessions, the post-quantum pin (these sessions are classic), then the
        // recovery-marks flag (none).
        let valid = sealed(header + [1] + body(current) + u32(1) + body(previous) + [0, 0])
        XCTAssertEqual(valid, bob.record.serialized(), "the hand-built layout is the documented one")
        let pinned = sealed(header + [1] + body(current) + u32(1) + body(previous) + [1, 0])
        XCTAssertTrue(try SessionRecord(serialized: pinned).requiresPostQuantum, "a pinned record of classic sessions loads pinned")
        XCTAssertEqual(try SessionRecord(serialized: pinned).serialized(), pinned)

        assertRecordFails(sealed(header + [1] + body(current) + u32(1) + body(current) + [0, 0]), .invalidPayload, "the same session twice")
        assertRecordFails(sealed(header + [2] + body(current) + u32(0) + [0, 0]), .invalidPayload, "hasCurrent not a bool")
        assertRecordFails(sealed(header + [0] + u32(1) + [0, 0]), .invalidPayload, "count beyond the sessions present")
        assertRecordFails(sealed(header + [0] + u32(0) + [0, 0] + [0]), .invalidPayload, "trailing byte")
        assertRecordFails(sealed(header + [0] + u32(0) + [2, 0]), .invalidPayload, "pin not a bool")
        assertRecordFails(sealed(header + [0] + u32(0) + [0, 2]), .invalidPayload, "marks flag not a bool")
        assertRecordFails(sealed(header + [0] + u32(0) + [0]), .invalidPayload, "no marks flag")
        assertRecordFails(sealed(header + [0] + u32(0) + [0, 1] + [0, 0]), .invalidPayload, "marks flagged but empty")
        for version: UInt8 in [0, 1, 6] {
            assertRecordFails(sealed(Array("SKST".utf8) + [StateKind.sessionRecord.rawValue, version] + [0] + u32(0) + [0, 0]), .unsupportedVersion)
        }
        // Version 3 (no marks, version-3 session bodies without the registration id and the
        // archived mark) still loads and is written back as version 5.
        let versionThree = sealed(Array("SKST".utf8) + [StateKind.sessionRecord.rawValue, 3] + [1] + bodyV4(current).dropLast(5)
            + u32(1) + bodyV4(previous).dropLast(5) + [0])
        XCTAssertEqual(try SessionRecord(serialized: versionThree).serialized(), valid)
        // Version 2 (no pin, version-2 session bodies without isPostQuantum) still loads,
        // unpinned and classic, and is written back as version 5.
        let versionTwo = sealed(Array("SKST".utf8) + [StateKind.sessionRecord.rawValue, 2] + [1] + bodyV4(current).dropLast(6)
            + u32(1) + bodyV4(previous).dropLast(6))
        let upgraded = try SessionRecord(serialized: versionTwo)
        XCTAssertFalse(upgraded.requiresPostQuantum)
        XCTAssertEqual(upgraded.serialized(), valid)
        assertRecordFails(sealed(Array("SKST".utf8) + [StateKind.sessionRecord.rawValue, 2] + [0] + u32(0) + [0]), .invalidPayload,
                          "a version-2 record has no pin")
        assertRecordFails(sealed(Array("SKST".utf8) + [StateKind.session.rawValue, 2] + [0] + u32(0)), .invalidPayload, "kind")

        // 41 distinct previous sessions exceed the bound even though each loads.
        var many = try Responder(seed: 12)
        let alice = try IdentityKeyPair(using: aliceRandom)
        for index in 0 ... ProtocolLimits.maxPreviousSessions {
            var session = try aliceSession(many, identity: alice, oneTimePreKeyID: UInt32(index + 1))
            _ = try many.receive(session.encrypt(utf8("x")))
        }
        let sessions = [try XCTUnwrap(many.record.currentSession)] + many.record.previousSessions
        XCTAssertEqual(sessions.count, 41)
        assertRecordFails(sealed(header + [0] + u32(41) + sessions.flatMap(body) + [0, 0]), .invalidPayload, "41 previous sessions")
        XCTAssertNoThrow(try SessionRecord(serialized: sealed(header + [0] + u32(40) + sessions.prefix(40).flatMap(body) + [0, 0])))
    }
}
