@_spi(Testing) import SessionKit
import SignalPrimitives
import Verification
import XCTest

/// The send log never crosses a change of the peer's identity key (SPEC §9, the third review's
/// finding 2): a relay that makes up a stale device and re-registers it under its own key gets,
/// once the user accepts the routine "safety number changed", nothing the real device was sent.
final class SendLogIdentityTests: XCTestCase {
    /// Alice, keeping a send log in her store, with the `Verification` trust store.
    private struct LoggingDevice {
        let address: ProtocolAddress
        let store: InMemoryProtocolStore
        let trust = InMemoryTrustStore()
        let manager: SessionManager

        init(_ user: String) throws {
            address = try ProtocolAddress(userID: user, deviceID: 1)
            store = InMemoryProtocolStore(identity: try IdentityKeyPair())
            manager = SessionManager(store: store, trust: trust, localAddress: address, sendLog: store)
        }
    }

    func testARelayThatRegistersAStaleDeviceUnderItsOwnKeyGetsNothingTheRealDeviceWasSent() async throws {
        let alice = try LoggingDevice("alice")
        let bob = try await TrustTestDevice("bob")
        try await alice.manager.processBundle(try bob.bundle(0), for: bob.address)
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(Array("hi".utf8), to: bob.address), from: alice.address)
        _ = try await alice.manager.decrypt(try await bob.manager.encrypt(Array("hi".utf8), to: alice.address), from: bob.address)
        var chain: SendLogChain?
        for text in ["the door code is 4711", "see you at 8"] {
            let bytes = try await alice.manager.encrypt(Array(text.utf8), to: bob.address)
            _ = try await bob.manager.decrypt(bytes, from: alice.address)
            let header = try RatchetMessage(serialized: bytes)
            chain = .pairwise(recipient: bob.address, ratchetKey: header.ratchetKey.rawRepresentation)
        }
        let logged = await alice.store.loadSendLog(for: try XCTUnwrap(chain), now: SystemWallClock().now())
        XCTAssertEqual(logged.map(\.peerIdentityKey), [bob.identity.publicKey, bob.identity.publicKey], "bound to Bob's key")

        // The relay says Bob's device is stale (the answer is unauthenticated by design) and hands
        // out a bundle for "bob.1" under its own key.
        try await alice.manager.applyDeviceListMismatch(DeviceListMismatch(stale: [1]), forUser: "bob")
        let relay = try await TrustTestDevice("bob")
        do {
            try await alice.manager.processBundle(try relay.bundle(0), for: bob.address)
            XCTFail("a changed key needs the user")
        } catch {
            XCTAssertEqual(error as? SessionError, .untrustedIdentity)
        }
        // The documented flow took the logged messages here, before the key change was accepted.
        let early = try await alice.manager.takeLoggedMessages(ofArchivedSessionWith: bob.address)
        XCTAssertEqual(early, [], "nothing is handed out before a session exists to check the key against")

        // The user accepts the routine "safety number changed".
        try await alice.manager.acceptIdentityChange(relay.identity.publicKey, forUser: "bob")
        try await alice.manager.processBundle(try relay.bundle(0), for: bob.address)
        let taken = try await alice.manager.takeLoggedMessages(ofArchivedSessionWith: bob.address)
        XCTAssertEqual(taken, [], "what the real device was sent never goes to the new key")
        let left = await alice.store.sendLogCount()
        XCTAssertEqual(left, 0, "accepting the new key discarded the entries under the old one (the hello too)")

        // Entries an app still holds (taken under the old key) are refused by the re-send.
        let resent = await alice.manager.resendLoggedMessages(logged, to: bob.address)
        XCTAssertEqual(resent.map(\.error), [.supersededIdentity, .supersededIdentity])
        XCTAssertEqual(resent.compactMap(\.ciphertext), [])
        // And nothing reached the relay's session: its first message from Alice is still new.
        let hello = try await alice.manager.encrypt(Array("hello".utf8), to: bob.address)
        let atRelay = try await relay.manager.decrypt(hello, from: alice.address)
        XCTAssertEqual(atRelay.plaintext, Array("hello".utf8))
    }

    /// The same device under the same key gets its messages again after a restore.
    func testTheSameKeyGetsItsMessagesBack() async throws {
        let alice = try LoggingDevice("alice")
        let bob = try await TrustTestDevice("bob")
        try await alice.manager.processBundle(try bob.bundle(0), for: bob.address)
        _ = try await alice.manager.encrypt(Array("one".utf8), to: bob.address)
        try await alice.manager.applyDeviceListMismatch(DeviceListMismatch(stale: [1]), forUser: "bob")
        try await alice.manager.processBundle(try bob.bundle(1), for: bob.address)
        let taken = try await alice.manager.takeLoggedMessages(ofArchivedSessionWith: bob.address)
        XCTAssertEqual(taken.map(\.plaintext), [Array("one".utf8)])
        let resent = await alice.manager.resendLoggedMessages(taken, to: bob.address)
        let message = try XCTUnwrap(resent.first?.ciphertext)
        let received = try await bob.manager.decrypt(message, from: alice.address)
        XCTAssertEqual(received.plaintext, Array("one".utf8))
    }
}
