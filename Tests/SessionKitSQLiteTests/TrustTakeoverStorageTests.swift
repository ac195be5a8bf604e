import Foundation
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// Third review (medium), on `SQLiteProtocolStore` as both store and trust evaluator (the key
/// is recorded inside the message's commit): one injected prekey message from an unknown
/// device must not take over a contact, and a change on a listed device can be rejected.
/// Both failed before the fix (the injected key replaced the contact's; there was no
/// rejection).
final class TrustTakeoverStorageTests: XCTestCase {
    private struct Party {
        let address: ProtocolAddress
        let identity: Ed25519.PublicKey
        let store: SQLiteProtocolStore
        let manager: SessionManager
        let upload: PreKeyUpload

        func bundle(_ index: Int) throws -> PreKeyBundle {
            try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys[index]))
        }
    }

    private func party(_ user: String, _ device: UInt32, in folder: URL) async throws -> Party {
        let address = address(user, device)
        let store = try SQLiteProtocolStore(
            path: folder.appendingPathComponent("\(user)-\(device)-\(UUID().uuidString).sqlite").path, storageKey: try fixtureStorageKey())
        let manager = SessionManager(store: store, trust: store, localAddress: address)
        let upload = try await manager.maintainPreKeys()
        return Party(address: address, identity: try await store.localIdentity().publicKey, store: store, manager: manager, upload: upload)
    }

    /// Alice and bob.1 exchanged a message each (bob trusted on first use).
    private func talking(in folder: URL) async throws -> (alice: Party, bob: Party) {
        let alice = try await party("alice", 1, in: folder)
        let bob = try await party("bob", 1, in: folder)
        try await alice.manager.processBundle(try bob.bundle(0), for: bob.address)
        _ = try await bob.manager.decrypt(try await alice.manager.encrypt(Array("hi".utf8), to: bob.address), from: alice.address)
        _ = try await alice.manager.decrypt(try await bob.manager.encrypt(Array("hey".utf8), to: alice.address), from: bob.address)
        return (alice, bob)
    }

    func testAnInjectedPreKeyMessageFromAnUnknownDeviceLeavesTheContactsRecordAndSessionAlone() async throws {
        let folder = try temporaryFolder()
        let (alice, bob) = try await talking(in: folder)
        let mallory = try await party("bob", 66, in: folder)
        try await mallory.manager.processBundle(try alice.bundle(1), for: alice.address)
        let injected = try await mallory.manager.encrypt(Array("it's bob".utf8), to: alice.address)
        let received = try await alice.manager.decrypt(injected, from: mallory.address)
        XCTAssertTrue(received.isQuarantined)
        XCTAssertEqual(received.identityObservation, .unknownDeviceWithOtherKey(recorded: bob.identity))
        let record = try await alice.store.record(forUser: "bob")
        XCTAssertEqual(record, TrustRecord(identityKey: bob.identity, status: .trusted, previousIdentityKey: nil, devices: [1]))

        let toBob = try await alice.manager.encrypt(Array("still you".utf8), to: bob.address)
        let atBob = try await bob.manager.decrypt(toBob, from: alice.address)
        XCTAssertEqual(atBob.plaintext, Array("still you".utf8))
        let fromBob = try await alice.manager.decrypt(try await bob.manager.encrypt(Array("yes".utf8), to: alice.address), from: bob.address)
        XCTAssertFalse(fromBob.isQuarantined)
        XCTAssertEqual(fromBob.identityObservation, .unchanged)
    }

    func testRejectingAChangeOnAListedDeviceRestoresTheRecordedKeyAndSession() async throws {
        let folder = try temporaryFolder()
        let (alice, bob) = try await talking(in: folder)
        let mallory = try await party("bob", 1, in: folder)  // claims bob.1 with its own key
        try await mallory.manager.processBundle(try alice.bundle(1), for: alice.address)
        let injected = try await alice.manager.decrypt(
            try await mallory.manager.encrypt(Array("new phone".utf8), to: alice.address), from: bob.address)
        XCTAssertEqual(injected.identityObservation, .changed(previous: bob.identity))
        let pending = try await alice.store.record(forUser: "bob")
        XCTAssertEqual(pending?.isAwaitingAcceptance, true)

        try await alice.manager.rejectIdentityChange(forUser: "bob")
        let restored = try await alice.store.record(forUser: "bob")
        XCTAssertEqual(restored, TrustRecord(identityKey: bob.identity, status: .trusted, previousIdentityKey: nil, devices: [1]))
        let toBob = try await alice.manager.encrypt(Array("back to you".utf8), to: bob.address)
        let atBob = try await bob.manager.decrypt(toBob, from: alice.address)
        XCTAssertEqual(atBob.plaintext, Array("back to you".utf8))
    }
}
