@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification
import XCTest

/// Issue 17: trust belongs to the user. Each test replays a finding of the second review
/// through `SessionManager` and `InMemoryTrustStore` (it failed before trust was per user).
final class TrustPerUserTests: XCTestCase {
    private typealias Device = TrustTestDevice

    /// A verified contact's talking session: alice and bob exchanged a message each, and alice
    /// verified bob.
    private func verifiedPair() async throws -> (alice: Device, bob: Device) {
        let alice = try await Device("alice")
        let bob = try await Device("bob")
        _ = try await bob.manager.decrypt(try await alice.send("hi", to: bob), from: alice.address)
        _ = try await alice.manager.decrypt(try await bob.manager.encrypt(Array("hey".utf8), to: alice.address), from: bob.address)
        try await alice.trust.markVerified(bob.identity.publicKey, forUser: "bob")
        return (alice, bob)
    }

    /// The ghost device: the server adds `bob.99` with its own identity key. Its bundle is a
    /// change of bob's key (refused), fan-out to bob's listed devices does not reach it, and
    /// the verified contact stays verified.
    func testAGhostDeviceOfAContactIsRefusedAndNeverReceives() async throws {
        let (alice, bob) = try await verifiedPair()
        let ghost = try await Device("bob", 99)
        await assertThrows(.untrustedIdentity) { try await alice.manager.processBundle(try ghost.bundle(), for: ghost.address) }
        let outcomes = try await alice.manager.encrypt(Array("to all of bob".utf8), toUser: "bob", devices: [1, 99])
        XCTAssertEqual(outcomes.map(\.address), [bob.address, ghost.address])
        XCTAssertNoThrow(try outcomes[0].result.get())
        XCTAssertEqual(outcomes[1].result.failure, .noSession, "no session was started with the ghost")
        let status = try await alice.trust.status(forUser: "bob")
        XCTAssertEqual(status, .verified)
    }

    /// The ghost device on the local user's own account: `alice.77` with another key is
    /// refused both as a bundle and as a prekey message; the real linked `alice.2` (same
    /// identity) is a new device.
    func testAGhostDeviceOnTheOwnAccountIsRefused() async throws {
        let alice = try await Device("alice")
        let linked = try await Device("alice", 2, identity: alice.identity)
        let ghost = try await Device("alice", 77)
        await assertThrows(.ownDeviceIdentityMismatch) { try await alice.manager.processBundle(try ghost.bundle(), for: ghost.address) }
        // The ghost's own manager would refuse to talk to alice.1 (another key on its account):
        // the server crafts the prekey message with the protocol's parts instead.
        var crafted = try SessionState(
            initiatingWith: try alice.bundle(1), identity: ghost.identity, localAddress: ghost.address,
            remoteAddress: alice.address, kem: nil)
        let fromGhost = try crafted.encrypt(Array("copy of what alice sends?".utf8))
        await assertThrows(.ownDeviceIdentityMismatch) { try await alice.manager.decrypt(fromGhost, from: ghost.address) }
        let stored = try await alice.manager.store.loadSession(for: ghost.address)
        XCTAssertNil(stored, "nothing was stored for the ghost")

        let fromLinked = try await linked.send("from my tablet", to: alice, bundle: 2)
        let received = try await alice.manager.decrypt(fromLinked, from: linked.address)
        XCTAssertEqual(received.identityObservation, .newDevice)
        XCTAssertFalse(received.isQuarantined)
        let ownRecord = try await alice.trust.record(forUser: "alice")
        XCTAssertNil(ownRecord, "the local user's devices are checked against the local identity, not recorded")
        let copies = try await alice.manager.encrypt(Array("to my devices".utf8), toUser: "alice", includingOwnDevices: true)
        XCTAssertEqual(copies.map(\.address), [linked.address])
    }

    /// A contact who reinstalls under a new device id (new identity) looks exactly like an
    /// injected message (third review): quarantined and reported as another key on an unknown
    /// device, bob's record left alone (not a first use, not a change). The app accepts the key
    /// explicitly once bob confirmed it; then the new device is bob's and the old one's
    /// sessions are gone. (Before the third review this was a change that blocked sending.)
    func testAReinstallUnderANewDeviceIDIsQuarantinedUntilTheAppAcceptsIt() async throws {
        let alice = try await Device("alice")
        let bob = try await Device("bob")
        _ = try await bob.manager.decrypt(try await alice.send("hi", to: bob), from: alice.address)
        let reinstalled = try await Device("bob", 2)
        let message = try await reinstalled.send("new phone", to: alice)
        let received = try await alice.manager.decrypt(message, from: reinstalled.address)
        XCTAssertEqual(received.identityObservation, .unknownDeviceWithOtherKey(recorded: bob.identity.publicKey))
        XCTAssertTrue(received.isQuarantined)
        await assertThrows(.noSession) { try await alice.manager.encrypt(Array("x".utf8), to: reinstalled.address) }
        let toOld = try await alice.manager.encrypt(Array("still to bob.1".utf8), to: bob.address)
        XCTAssertFalse(toOld.isEmpty)
        try await alice.manager.acceptIdentityChange(reinstalled.identity.publicKey, forUser: "bob")
        let reply = try await alice.manager.encrypt(Array("welcome back".utf8), to: reinstalled.address)
        let opened = try await reinstalled.manager.decrypt(reply, from: alice.address)
        XCTAssertEqual(opened.plaintext, Array("welcome back".utf8))
        let next = try await alice.manager.decrypt(
            try await reinstalled.manager.encrypt(Array("thanks".utf8), to: alice.address), from: reinstalled.address)
        XCTAssertFalse(next.isQuarantined)
        XCTAssertEqual(next.identityObservation, .newDevice)
        await assertThrows(.noSession) { try await alice.manager.encrypt(Array("x".utf8), to: bob.address) }
    }

    /// An injected prekey message under another key, for a verified contact: returned
    /// quarantined, the trust record untouched, the real session still current; the real
    /// contact's next message is not a change.
    func testAnInjectedPreKeyMessageForAVerifiedContactIsQuarantined() async throws {
        let (alice, bob) = try await verifiedPair()
        let mallory = try await Device("bob")  // claims bob.1, with its own identity
        let injected = try await mallory.send("it's me, bob", to: alice, bundle: 1)
        let received = try await alice.manager.decrypt(injected, from: bob.address)
        XCTAssertTrue(received.isQuarantined)
        XCTAssertEqual(received.identityObservation, .changed(previous: bob.identity.publicKey))
        let record = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(record?.status, .verified)
        XCTAssertEqual(record?.identityKey, bob.identity.publicKey)

        let toBob = try await alice.manager.encrypt(Array("still you?".utf8), to: bob.address)
        let atBob = try await bob.manager.decrypt(toBob, from: alice.address)
        XCTAssertEqual(atBob.plaintext, Array("still you?".utf8), "the real session stayed current")
        let fromBob = try await bob.manager.encrypt(Array("yes".utf8), to: alice.address)
        let real = try await alice.manager.decrypt(fromBob, from: bob.address)
        XCTAssertEqual(real.identityObservation, .unchanged)
        XCTAssertFalse(real.isQuarantined)

        // More from the injected session stays quarantined and never becomes current.
        let more = try await mallory.manager.encrypt(Array("again".utf8), to: alice.address)
        let second = try await alice.manager.decrypt(more, from: bob.address)
        XCTAssertTrue(second.isQuarantined)
        let current = try await alice.manager.store.loadSession(for: bob.address)?.remoteIdentityKey
        XCTAssertEqual(current, bob.identity.publicKey)
    }

    /// A distribution from a quarantined sender is refused: its group messages would otherwise
    /// be shown under the contact's name.
    func testADistributionUnderAVerifiedContactsChangedKeyIsRefused() async throws {
        let (alice, bob) = try await verifiedPair()
        let mallory = try await Device("bob")
        let group = try GroupID("g")
        try await alice.manager.setGroupMembers([bob.address], for: group)
        try await mallory.manager.processBundle(try alice.bundle(1), for: alice.address)
        let sent = try await mallory.manager.distributeSenderKey(for: group, to: [alice.address])
        let bytes = try XCTUnwrap(try sent.first?.result.get())
        await assertThrows(.untrustedIdentity) {
            try await alice.manager.processSenderKeyDistribution(encrypted: bytes, for: group, from: bob.address)
        }
    }

    /// A stolen old state after the owner re-registered: once the app accepted the new key,
    /// the old sessions are gone and the old key is superseded, so the thief can neither
    /// revive a session nor start one, and replies go to the new key only.
    func testAStolenOldStateCannotReviveItsSessionAfterTheChangeWasAccepted() async throws {
        let alice = try await Device("alice")
        let thief = try await Device("bob")  // bob's old phone, state and identity stolen
        _ = try await thief.manager.decrypt(try await alice.send("hi", to: thief), from: alice.address)
        _ = try await alice.manager.decrypt(try await thief.manager.encrypt(Array("hey".utf8), to: alice.address), from: thief.address)

        let bob = try await Device("bob")  // re-registered: new identity, same address
        _ = try await alice.manager.decrypt(try await bob.send("new identity", to: alice), from: bob.address)
        try await alice.manager.acceptIdentityChange(bob.identity.publicKey, forUser: "bob")

        // The old session was retired: a message on it finds no session that knows it.
        let onOldSession = try await thief.manager.encrypt(Array("old session".utf8), to: alice.address)
        await assertThrows(.invalidMessage) { try await alice.manager.decrypt(onOldSession, from: bob.address) }
        let sessions = try await alice.manager.store.loadSession(for: bob.address)
        XCTAssertEqual(sessions?.previousSessions.count, 0, "only the new identity's session is left")
        XCTAssertEqual(sessions?.remoteIdentityKey, bob.identity.publicKey)
        let thiefAgain = try await Device("bob", 1, identity: thief.identity)
        let newFromThief = try await thiefAgain.send("a new session under the old key", to: alice, bundle: 2)
        await assertThrows(.supersededIdentity) { try await alice.manager.decrypt(newFromThief, from: bob.address) }

        let reply = try await alice.manager.encrypt(Array("for the new bob only".utf8), to: bob.address)
        let opened = try await bob.manager.decrypt(reply, from: alice.address)
        XCTAssertEqual(opened.plaintext, Array("for the new bob only".utf8))
    }

    /// Fan-out from the server's lists, with bundles fetched for devices without a session:
    /// every real device receives (a contact's and the own account's new linked devices
    /// included), a ghost on either account gets nothing, each with its own outcome.
    func testFanOutFromTheServersListsReachesEveryRealDeviceAndNoGhost() async throws {
        let (alice, bob) = try await verifiedPair()
        let bobTablet = try await Device("bob", 2, identity: bob.identity)
        let bobGhost = try await Device("bob", 99)
        let aliceLaptop = try await Device("alice", 3, identity: alice.identity)
        let aliceGhost = try await Device("alice", 4)
        let published = [bobTablet, bobGhost, aliceLaptop, aliceGhost]
        let bundles = try Dictionary(uniqueKeysWithValues: published.map { ($0.address, try $0.bundle()) })
        let outcomes = try await alice.manager.encrypt(
            Array("to everyone".utf8), toUser: "bob", devices: [1, 2, 99, 5], ownDevices: [1, 3, 4],
            fetchingBundles: { address in bundles[address] })
        XCTAssertEqual(outcomes.map(\.address), [
            bob.address, bobTablet.address, bob.address.sibling(5), bobGhost.address, aliceLaptop.address, aliceGhost.address,
        ].sorted { ($0.userID == "bob" ? 0 : 1, $0.deviceID) < ($1.userID == "bob" ? 0 : 1, $1.deviceID) })
        var errors: [ProtocolAddress: SessionError] = [:]
        var delivered: [ProtocolAddress: [UInt8]] = [:]
        for outcome in outcomes {
            switch outcome.result {
            case let .success(bytes): delivered[outcome.address] = bytes
            case let .failure(error): errors[outcome.address] = error
            }
        }
        XCTAssertEqual(errors, [
            bobGhost.address: .untrustedIdentity, aliceGhost.address: .ownDeviceIdentityMismatch, bob.address.sibling(5): .noSession,
        ])
        for device in [bob, bobTablet, aliceLaptop] {
            let bytes = try XCTUnwrap(delivered[device.address], "\(device.address)")
            let opened = try await device.manager.decrypt(bytes, from: alice.address)
            XCTAssertEqual(opened.plaintext, Array("to everyone".utf8))
        }
        let record = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(record?.status, .verified, "the ghost changed nothing")
        XCTAssertEqual(record?.devices, [1, 2])
    }

    /// Accepting a key after it changed again (a change to a third key awaits acceptance) is
    /// `untrustedIdentity` (ask the user about the newer key), and changes nothing.
    func testAcceptingAKeyThatChangedAgainAsksAgain() async throws {
        let alice = try await Device("alice")
        let bob = try await Device("bob")
        _ = try await bob.manager.decrypt(try await alice.send("hi", to: bob), from: alice.address)
        _ = try await alice.manager.decrypt(try await bob.manager.encrypt(Array("hey".utf8), to: alice.address), from: bob.address)
        let second = try await Device("bob")
        _ = try await alice.manager.decrypt(try await second.send("new phone", to: alice), from: bob.address)
        let third = try await Device("bob")
        _ = try await alice.manager.decrypt(try await third.send("newer phone", to: alice, bundle: 1), from: bob.address)
        await assertThrows(.untrustedIdentity) { try await alice.manager.acceptIdentityChange(second.identity.publicKey, forUser: "bob") }
        let record = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(record?.identityKey, third.identity.publicKey)
        XCTAssertEqual(record?.isAwaitingAcceptance, true)
    }

    /// A verified contact's linked device (same identity) is a new device, verified too.
    func testAVerifiedContactsLinkedDeviceInheritsTheVerification() async throws {
        let (alice, bob) = try await verifiedPair()
        let tablet = try await Device("bob", 2, identity: bob.identity)
        let received = try await alice.manager.decrypt(try await tablet.send("from my tablet", to: alice, bundle: 1), from: tablet.address)
        XCTAssertEqual(received.identityObservation, .newDevice)
        let record = try await alice.trust.record(forUser: "bob")
        XCTAssertEqual(record?.status, .verified)
        XCTAssertEqual(record?.devices, [1, 2])
        let reply = try await alice.manager.encrypt(Array("hello tablet".utf8), to: tablet.address)
        let atTablet = try await tablet.manager.decrypt(reply, from: alice.address)
        XCTAssertEqual(atTablet.plaintext, Array("hello tablet".utf8))
    }
}

private extension Result {
    var failure: Failure? {
        if case let .failure(error) = self { return error }
        return nil
    }
}

private extension ProtocolAddress {
    /// Another device of the same user.
    func sibling(_ device: UInt32) -> ProtocolAddress {
        do { return try ProtocolAddress(userID: userID, deviceID: device) } catch { preconditionFailure("\(error)") }
    }
}
