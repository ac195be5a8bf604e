@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification
import XCTest

/// Third review (medium): one injected prekey message took over an unverified contact. Each
/// test tells the attack (or the app's answer to it) through `SessionManager` and
/// `InMemoryTrustStore`, and failed before the fix (a key change, a refused acceptance, or an
/// API that did not exist).
final class TrustTakeoverTests: XCTestCase {
    private typealias Device = TrustTestDevice

    /// Alice and bob (device 1) exchanged a message each; bob is trusted on first use, not
    /// verified.
    private func talkingPair() async throws -> (alice: Device, bob: Device) {
        let alice = try await Device("alice")
        let bob = try await Device("bob")
        _ = try await bob.manager.decrypt(try await alice.send("hi", to: bob), from: alice.address)
        _ = try await alice.manager.decrypt(try await bob.manager.encrypt(Array("hey".utf8), to: alice.address), from: bob.address)
        return (alice, bob)
    }

    /// The attack: the server delivers a prekey message from `bob.66`, a device id bob never
    /// had, under mallory's key. It is quarantined and reported as a key on an unknown device;
    /// bob's record stays, alice keeps sending to bob.1 (and nothing to bob.66), bob's own
    /// messages are not quarantined, and bob's key can still be accepted. Before the fix the
    /// message replaced bob's key: sending to bob blocked, bob quarantined, only mallory's key
    /// acceptable.
    func testAnInjectedPreKeyMessageFromAnUnknownDeviceDoesNotTakeOverTheContact() async throws {
        let (alice, bob) = try await talkingPair()
        let mallory = try await Device("bob", 66)
        let injected = try await mallory.send("new number, it's bob", to: alice, bundle: 1)
        let received = try await alice.manager.decrypt(injected, from: mallory.address)
        XCTAssertTrue(received.isQuarantined)
        XCTAssertEqual(received.identityObservation, .unknownDeviceWithOtherKey(recorded: bob.identity.publicKey))
        XCTAssertEqual(received.senderIdentityKey, mallory.identity.publicKey)
        let record = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(record, TrustRecord(identityKey: bob.identity.publicKey, status: .trusted, previousIdentityKey: nil, devices: [1]))
        let ghostSession = try await alice.manager.store.loadSession(for: mallory.address)
        XCTAssertNil(ghostSession?.currentSession, "the injected session never becomes current")

        let outcomes = try await alice.manager.encrypt(Array("to all of bob".utf8), toUser: "bob", devices: [1, 66])
        XCTAssertEqual(outcomes.map(\.address), [bob.address, mallory.address])
        let toBob = try outcomes[0].result.get()
        XCTAssertThrowsError(try outcomes[1].result.get(), "nothing is sent to the injected device")
        let atBob = try await bob.manager.decrypt(toBob, from: alice.address)
        XCTAssertEqual(atBob.plaintext, Array("to all of bob".utf8))
        await assertThrows(.untrustedIdentity) { try await alice.manager.processBundle(try mallory.bundle(), for: mallory.address) }

        let fromBob = try await alice.manager.decrypt(try await bob.manager.encrypt(Array("that's not me".utf8), to: alice.address), from: bob.address)
        XCTAssertFalse(fromBob.isQuarantined)
        XCTAssertEqual(fromBob.identityObservation, .unchanged)

        // More from the injected session stays quarantined.
        let more = try await mallory.manager.encrypt(Array("please reply".utf8), to: alice.address)
        let second = try await alice.manager.decrypt(more, from: mallory.address)
        XCTAssertTrue(second.isQuarantined)
        XCTAssertEqual(second.identityObservation, .unknownDeviceWithOtherKey(recorded: bob.identity.publicKey))

        // Bob's key can still be accepted (it changes nothing in the record) and retires the
        // injected session: its next message finds no session (a prekey message whose prekey
        // was used: a replay).
        try await alice.manager.acceptIdentityChange(bob.identity.publicKey, forUser: "bob")
        let stillBob = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(stillBob, record, "accepting the recorded key changes nothing")
        let third = try await mallory.manager.encrypt(Array("hello?".utf8), to: alice.address)
        await assertThrows(.duplicateMessage) { try await alice.manager.decrypt(third, from: mallory.address) }
    }

    /// The same injection against a verified contact: quarantined, reported distinctly, the
    /// contact stays verified and keeps receiving.
    func testAnInjectedPreKeyMessageFromAnUnknownDeviceLeavesAVerifiedContactVerified() async throws {
        let (alice, bob) = try await talkingPair()
        try await alice.trust.markVerified(bob.identity.publicKey, forUser: "bob")
        let mallory = try await Device("bob", 66)
        let received = try await alice.manager.decrypt(try await mallory.send("hi", to: alice, bundle: 1), from: mallory.address)
        XCTAssertTrue(received.isQuarantined)
        XCTAssertEqual(received.identityObservation, .unknownDeviceWithOtherKey(recorded: bob.identity.publicKey))
        let status = try await alice.trust.status(forUser: "bob")
        XCTAssertEqual(status, .verified)
        let toBob = try await alice.manager.encrypt(Array("still verified".utf8), to: bob.address)
        let atBob = try await bob.manager.decrypt(toBob, from: alice.address)
        XCTAssertEqual(atBob.plaintext, Array("still verified".utf8))
    }

    /// Mallory claims bob's listed device: a change awaiting acceptance (trust on first use).
    /// The real bob's messages under the recorded key are quarantined, not recorded (no
    /// flip-flop); the app rejects the change: bob's key is restored, the injected session
    /// retired, and alice talks to the real bob again.
    func testRejectingAChangeRestoresTheRecordedKeyAndTheRealSession() async throws {
        let (alice, bob) = try await talkingPair()
        let mallory = try await Device("bob")  // claims bob.1 with its own key
        let injected = try await alice.manager.decrypt(try await mallory.send("new phone", to: alice, bundle: 1), from: bob.address)
        XCTAssertEqual(injected.identityObservation, .changed(previous: bob.identity.publicKey))
        XCTAssertFalse(injected.isQuarantined)
        await assertThrows(.untrustedIdentity) { try await alice.manager.encrypt(Array("x".utf8), to: bob.address) }

        let fromBob = try await alice.manager.decrypt(try await bob.manager.encrypt(Array("I did not change".utf8), to: alice.address), from: bob.address)
        XCTAssertTrue(fromBob.isQuarantined, "the recorded key while a change is pending: shown apart, recorded as nothing")
        XCTAssertEqual(fromBob.identityObservation, .changed(previous: mallory.identity.publicKey))
        let pending = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(pending?.identityKey, mallory.identity.publicKey)
        XCTAssertEqual(pending?.previousIdentityKey, bob.identity.publicKey)

        try await alice.manager.rejectIdentityChange(forUser: "bob")
        let restored = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(restored, TrustRecord(identityKey: bob.identity.publicKey, status: .trusted, previousIdentityKey: nil, devices: [1]))
        let current = try await alice.manager.store.loadSession(for: bob.address)?.remoteIdentityKey
        XCTAssertEqual(current, bob.identity.publicKey)
        let toBob = try await alice.manager.encrypt(Array("back to you".utf8), to: bob.address)
        let atBob = try await bob.manager.decrypt(toBob, from: alice.address)
        XCTAssertEqual(atBob.plaintext, Array("back to you".utf8))
        let later = try await alice.manager.decrypt(try await bob.manager.encrypt(Array("good".utf8), to: alice.address), from: bob.address)
        XCTAssertFalse(later.isQuarantined)
        XCTAssertEqual(later.identityObservation, .unchanged)
        // The injected session was retired: its next (prekey) message is a replay of a used prekey.
        let onInjectedSession = try await mallory.manager.encrypt(Array("still me".utf8), to: alice.address)
        await assertThrows(.duplicateMessage) { try await alice.manager.decrypt(onInjectedSession, from: bob.address) }
    }

    /// An app's own evaluator that does not implement rejection: the default refuses
    /// (`invalidConfiguration`) rather than pretending to have rejected anything.
    func testRejectingWithAnEvaluatorThatCannotRejectIsRefused() async throws {
        struct AcceptingEverything: IdentityTrustEvaluator {
            func evaluateIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> TrustDecision {
                TrustDecision(observation: .unchanged, allowsSending: true)
            }
            func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> IdentityObservation { .unchanged }
            func acceptIdentity(_ identityKey: Ed25519.PublicKey, forUser userID: String) {}
        }
        let identity = try IdentityKeyPair()
        let manager = SessionManager(
            store: InMemoryProtocolStore(identity: identity), trust: AcceptingEverything(), localAddress: try ProtocolAddress(userID: "alice", deviceID: 1))
        do {
            try await manager.rejectIdentityChange(forUser: "bob")
            XCTFail("the default rejection must refuse")
        } catch {
            guard case .invalidConfiguration = error else { return XCTFail("\(error)") }
        }
    }

    /// A retry notice from the injected device (its own key, a device id bob never had) is
    /// reported as an untrusted identity and does nothing: the record stays bob's.
    func testARetryNoticeFromAnUnknownDeviceWithAnotherKeyIsReportedAndDoesNothing() async throws {
        let (alice, bob) = try await talkingPair()
        let mallory = try await Device("bob", 66)
        let notice = try RetryNotice(
            from: mallory.identity, at: mallory.address, to: alice.address, recipientIdentityKey: alice.identity.publicKey,
            registrationID: try XCTUnwrap(RegistrationID(rawValue: 9)),
            failure: .pairwise(ratchetKey: [UInt8](repeating: 7, count: 32), counter: 0))
        let before = try await alice.trust.record(forUser: "bob")
        let outcome = try await alice.manager.processRetryNotice(notice.serialized, from: mallory.address)
        guard case let .untrustedIdentity(key) = outcome.action else { return XCTFail("\(outcome)") }
        XCTAssertEqual(key, mallory.identity.publicKey)
        let after = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(after, before)
        let toBob = try await alice.manager.encrypt(Array("still you".utf8), to: bob.address)
        XCTAssertFalse(toBob.isEmpty)
    }

    /// While a change is pending, a *new session* under the recorded key (bob restored his
    /// identity on a fresh install of bob.1) is quarantined like any other message under it:
    /// recorded as nothing, never made current, so the app still chooses between the keys.
    func testANewSessionUnderTheRecordedKeyWhileAChangeIsPendingIsQuarantined() async throws {
        let (alice, bob) = try await talkingPair()
        let mallory = try await Device("bob")
        _ = try await alice.manager.decrypt(try await mallory.send("new phone", to: alice, bundle: 1), from: bob.address)
        let pending = try await alice.trust.record(forUser: "bob")
        let restoredBob = try await Device("bob", 1, identity: bob.identity)
        let fromBob = try await alice.manager.decrypt(try await restoredBob.send("it's really me", to: alice, bundle: 2), from: bob.address)
        XCTAssertTrue(fromBob.establishedSession)
        XCTAssertTrue(fromBob.isQuarantined)
        XCTAssertEqual(fromBob.identityObservation, .changed(previous: mallory.identity.publicKey))
        let record = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(record, pending, "nothing recorded")
        let current = try await alice.manager.store.loadSession(for: bob.address)?.remoteIdentityKey
        XCTAssertEqual(current, mallory.identity.publicKey, "the quarantined session did not become current")
    }

    /// While a change is pending either key can be accepted: accepting the recorded key
    /// restores it without superseding the pending one (seen again, it is reported again, not
    /// refused). Before the fix accepting the recorded key was `untrustedIdentity`.
    func testWhileAChangeIsPendingTheRecordedKeyCanBeAccepted() async throws {
        let (alice, bob) = try await talkingPair()
        let mallory = try await Device("bob")
        _ = try await alice.manager.decrypt(try await mallory.send("new phone", to: alice, bundle: 1), from: bob.address)
        try await alice.manager.acceptIdentityChange(bob.identity.publicKey, forUser: "bob")
        let record = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(record, TrustRecord(identityKey: bob.identity.publicKey, status: .trusted, previousIdentityKey: nil, devices: [1]))
        let toBob = try await alice.manager.encrypt(Array("it was not you".utf8), to: bob.address)
        let atBob = try await bob.manager.decrypt(toBob, from: alice.address)
        XCTAssertEqual(atBob.plaintext, Array("it was not you".utf8))

        let malloryAgain = try await Device("bob", 1, identity: mallory.identity)
        let again = try await alice.manager.decrypt(try await malloryAgain.send("really", to: alice, bundle: 2), from: bob.address)
        XCTAssertEqual(again.identityObservation, .changed(previous: bob.identity.publicKey), "reported again, not refused")
    }

    /// A verified contact who reinstalled: the new key's message is quarantined; comparing the
    /// new safety number and verifying the key is one step (before the fix `markVerified`
    /// threw `identityKeyMismatch` until the key had been accepted). Bob's next message is his
    /// again, and alice's reply reaches the new installation.
    func testAVerifiedContactWhoReinstalledIsReverifiedInOneStep() async throws {
        let (alice, bob) = try await talkingPair()
        try await alice.trust.markVerified(bob.identity.publicKey, forUser: "bob")
        let newBob = try await Device("bob")
        let first = try await alice.manager.decrypt(try await newBob.send("reinstalled", to: alice, bundle: 1), from: bob.address)
        XCTAssertTrue(first.isQuarantined)
        XCTAssertEqual(first.identityObservation, .changed(previous: bob.identity.publicKey))

        try await alice.trust.markVerified(first.senderIdentityKey, forUser: "bob")
        let record = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(record?.identityKey, newBob.identity.publicKey)
        XCTAssertEqual(record?.status, .verified)
        let next = try await alice.manager.decrypt(try await newBob.manager.encrypt(Array("verified?".utf8), to: alice.address), from: bob.address)
        XCTAssertFalse(next.isQuarantined)
        XCTAssertEqual(next.identityObservation, .unchanged)
        let reply = try await alice.manager.encrypt(Array("verified".utf8), to: bob.address)
        let atNewBob = try await newBob.manager.decrypt(reply, from: alice.address)
        XCTAssertEqual(atNewBob.plaintext, Array("verified".utf8))
        // The old installation's sessions are retired by the manager's acceptance, which keeps
        // the verification.
        try await alice.manager.acceptIdentityChange(newBob.identity.publicKey, forUser: "bob")
        let status = try await alice.trust.status(forUser: "bob")
        XCTAssertEqual(status, .verified)
        let onOldSession = try await bob.manager.encrypt(Array("old phone".utf8), to: alice.address)
        await assertThrows(.invalidMessage) { try await alice.manager.decrypt(onOldSession, from: bob.address) }
    }
}
