import Foundation
import TestSupport
import XCTest
@testable import SessionKit

/// One entry point for incoming envelopes, the envelopes the manager makes, encrypting to a
/// user's listed devices, what each error tells the app to do, and damaged stored state.
final class ReceiveDispatchTests: XCTestCase {
    func testAConversationAndAGroupRunOnTextEnvelopesThroughReceiveAlone() async throws {
        let server = FakeServer()
        let team = groupID("team")
        let alice = try await TestDevice("alice", 1, seed: 7101, server: server)
        let bob = try await TestDevice("bob", 1, seed: 7102, server: server)
        try await makeGroup(team, of: [alice, bob])
        try await alice.startSession(with: bob.address, server: server)

        // A prekey message, as text, then a reply.
        let first = try await alice.manager.encryptEnvelope(utf8("hello bob"), to: bob.address)
        XCTAssertEqual(first.kind, .message)
        XCTAssertEqual(first.sender, alice.address)
        XCTAssertEqual(first.recipient, bob.address)
        guard case let .message(atBob) = try await bob.manager.receive(try MessageEnvelope(text: first.encodedText())) else {
            return XCTFail("a pairwise message")
        }
        XCTAssertEqual(atBob.plaintext, utf8("hello bob"))
        XCTAssertTrue(atBob.establishedSession)
        let reply = try await bob.manager.encryptEnvelope(Data("hi alice".utf8), to: alice.address)
        let atAlice = try await alice.manager.receive(try MessageEnvelope(text: reply.encodedText()))
        XCTAssertEqual(atAlice.plaintext, utf8("hi alice"))
        XCTAssertEqual(atAlice.sender, bob.address)

        // The group: the distribution's envelope from the outcome, then a group message.
        let outcomes = try await alice.manager.distributeSenderKey(for: team, to: [bob.address])
        let distribution = try XCTUnwrap(outcomes.first?.envelope)
        XCTAssertEqual(distribution.kind, .senderKeyDistribution)
        XCTAssertEqual(distribution.group, team)
        XCTAssertEqual(distribution.recipient, bob.address)
        guard case let .senderKeyDistribution(group, sender, _, _, _) = try await bob.manager.receive(try MessageEnvelope(text: distribution.encodedText()))
        else { return XCTFail("a distribution") }
        XCTAssertEqual(group, team)
        XCTAssertEqual(sender, alice.address)
        let groupMessage = try await alice.manager.groupEncryptEnvelope(utf8("hello team"), for: team)
        XCTAssertNil(groupMessage.recipient)
        guard case let .groupMessage(received) = try await bob.manager.receive(try MessageEnvelope(text: groupMessage.encodedText())) else {
            return XCTFail("a group message")
        }
        XCTAssertEqual(received.plaintext, utf8("hello team"))
        XCTAssertEqual(received.group, team)
        XCTAssertEqual(received.sender, alice.address)

        // A replay of the group message is a duplicate the app drops silently.
        await assertThrowsAsync(.duplicateMessage) { try await bob.manager.receive(groupMessage) }
        XCTAssertEqual(SessionError.duplicateMessage.disposition, .dropSilently)
    }

    func testReceiveRefusesAnEnvelopeForAnotherDeviceAndAGroupMessageBeforeItsSenderKey() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 7201, server: server)
        let bob = try await TestDevice("bob", 1, seed: 7202, server: server)
        let bobsOther = try await TestDevice("bob", 2, seed: 7203, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let toBob = try await alice.manager.encryptEnvelope(utf8("for bob.1"), to: bob.address)
        await assertThrowsAsync(.invalidMessage) { try await bobsOther.manager.receive(toBob) }
        // Still decryptable by its recipient: the refusal changed nothing.
        let atBob = try await bob.manager.receive(toBob)
        XCTAssertEqual(atBob.plaintext, utf8("for bob.1"))

        let team = groupID("team")
        try await bob.manager.setGroupMembers([alice.address], for: team)
        _ = try await alice.manager.senderKeyDistributionMessage(for: team)
        let early = try await alice.manager.groupEncryptEnvelope(utf8("too early"), for: team)
        await assertThrowsAsync(.unknownChain) { try await bob.manager.receive(early) }
        XCTAssertEqual(SessionError.unknownChain.disposition, .retryLater)
    }

    func testReceiveHandsTheMessageToTheStepBeforePersistingAndPersistsNothingWhenTheStepFails() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 7301, server: server)
        let bob = try await TestDevice("bob", 1, seed: 7302, server: server)
        try await alice.startSession(with: bob.address, server: server)
        let envelope = try await alice.manager.encryptEnvelope(utf8("keep me"), to: bob.address)
        await assertThrowsAsync(.storage("app database full")) {
            try await bob.manager.receive(envelope, beforePersisting: { (_: ReceivedMessage) async throws(SessionError) in
                throw .storage("app database full")
            })
        }
        let seen = SeenPlaintexts()
        let received = try await bob.manager.receive(envelope, beforePersisting: { (message: ReceivedMessage) async throws(SessionError) in
            await seen.add(message.plaintext ?? [])
        })
        XCTAssertEqual(received.plaintext, utf8("keep me"))
        let plaintexts = await seen.all
        XCTAssertEqual(plaintexts, [utf8("keep me")])
    }

    func testEncryptingToAUserSListedDevicesReportsADeviceWithoutASessionAndSkipsAnUnlistedOne() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 7401, server: server)
        let bob1 = try await TestDevice("bob", 1, seed: 7402, server: server)
        let bob2 = try await TestDevice("bob", 2, seed: 7403, server: server)
        let bob3 = try await TestDevice("bob", 3, seed: 7404, server: server)
        _ = bob3
        try await alice.startSession(with: bob1.address, server: server)
        try await alice.startSession(with: bob2.address, server: server)

        // Without a list: the devices with a session only.
        let known = try await alice.manager.encrypt(utf8("hi"), toUser: "bob")
        XCTAssertEqual(known.map(\.address.deviceID), [1, 2])
        // The server says bob has devices 1 and 3 (2 was removed): 3 has no session yet.
        let listed = try await alice.manager.encrypt(utf8("hi"), toUser: "bob", devices: [3, 1, 3])
        XCTAssertEqual(listed.map(\.address.deviceID), [1, 3])
        XCTAssertNotNil(listed[0].envelope)
        XCTAssertEqual(listed[0].envelope?.recipient, bob1.address)
        XCTAssertEqual(listed[1].error, .noSession)
        XCTAssertEqual(listed[1].error?.disposition, .startNewSession)
        XCTAssertNil(listed[1].envelope)
        // Bob's device 1 decrypts both messages it was sent.
        for outcome in [known[0], listed[0]] {
            let message = try await bob1.manager.receive(try XCTUnwrap(outcome.envelope))
            XCTAssertEqual(message.plaintext, utf8("hi"))
        }
    }

    func testAStoredStateThatDoesNotLoadIsDamagedStateNamingItsKind() async throws {
        let server = FakeServer()
        let team = groupID("team")
        let alice = try await TestDevice("alice", 1, seed: 7501, server: server)
        let bob = try await TestDevice("bob", 1, seed: 7502, server: server)
        try await makeGroup(team, of: [alice, bob])
        try await alice.startSession(with: bob.address, server: server)
        let message = try await alice.manager.encrypt(utf8("hello"), to: bob.address)
        _ = try await alice.manager.senderKeyDistributionMessage(for: team)
        let groupMessage = try await alice.manager.groupEncrypt(utf8("team"), for: team)

        await alice.store.setUndecodable(true)
        await bob.store.setUndecodable(true)
        await assertThrowsAsync(.damagedState(.session, peer: bob.address)) {
            try await alice.manager.encrypt(utf8("again"), to: bob.address)
        }
        await assertThrowsAsync(.damagedState(.senderKeySendingChain)) {
            try await alice.manager.groupEncrypt(utf8("again"), for: team)
        }
        await assertThrowsAsync(.damagedState(.session, peer: alice.address)) {
            try await bob.manager.decrypt(message, from: alice.address)
        }
        await assertThrowsAsync(.damagedState(.senderKeyReceiverState, peer: alice.address)) {
            try await bob.manager.groupDecrypt(groupMessage, for: team, from: alice.address)
        }
        XCTAssertEqual(SessionError.damagedState(.session).disposition, .stopAndReport)
        XCTAssertEqual(SessionError.damagedState(.session, peer: bob.address).errorDescription,
                       "This device's stored session with bob.1 does not load; other sessions are unaffected: delete it and start a new session.")
        XCTAssertEqual(SessionError.damagedState(.identity).errorDescription, "This device's stored identity state does not load: the store is damaged.")

        // Readable again: nothing was changed by the failed calls.
        await bob.store.setUndecodable(false)
        let decrypted = try await bob.manager.decrypt(message, from: alice.address)
        XCTAssertEqual(decrypted.plaintext, utf8("hello"))
    }

    func testEveryErrorHasADispositionAndADescriptionForTheApp() {
        let expected: [SessionError: ErrorDisposition] = [
            .invalidKey: .drop, .invalidSignature: .drop, .invalidMessage: .drop, .tooManySkippedMessages: .drop,
            .invalidPadding: .drop, .unsupportedVersion: .drop, .invalidPayload: .drop, .postQuantumRequired: .drop,
            .supersededIdentity: .drop, .ownDeviceIdentityMismatch: .drop, .deviceLinkMismatch: .drop,
            .duplicateMessage: .dropSilently,
            .unknownChain: .retryLater,
            .messageKeyUnavailable: .neverDecryptable, .unknownPreKey: .neverDecryptable,
            .noSession: .startNewSession, .chainExhausted: .startNewSession,
            .untrustedIdentity: .askUser,
            .storage("busy"): .retry, .staleState: .retry,
            .damagedState(.identity): .stopAndReport, .primitive(.aesGCMUnavailable): .stopAndReport,
            .invalidAddress: .fixCaller, .invalidGroupID: .fixCaller, .invalidConfiguration("x"): .fixCaller,
            .reentrantCall: .fixCaller, .kemUnavailable: .fixCaller,
        ]
        for (error, disposition) in expected {
            XCTAssertEqual(error.disposition, disposition, "\(error)")
            XCTAssertFalse((error.errorDescription ?? "").isEmpty, "\(error)")
            XCTAssertEqual((error as any Error).localizedDescription, error.errorDescription)
        }
        XCTAssertEqual(Set(expected.values), Set(ErrorDisposition.allCases), "every disposition is used")
        // Every case of the enum is in the table (the count of cases, by their names).
        XCTAssertEqual(Set(expected.keys.map { "\($0)".prefix { $0 != "(" } }).count, 27)
    }
}

/// Plaintexts a step saw.
private actor SeenPlaintexts {
    private(set) var all: [[UInt8]] = []
    func add(_ plaintext: [UInt8]) { all.append(plaintext) }
}
