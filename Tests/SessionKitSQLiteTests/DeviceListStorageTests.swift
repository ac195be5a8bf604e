import Foundation
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import XCTest

/// Device lists the server can check (SPEC §9) on `SQLiteProtocolStore` files: Bob restores his
/// identity into a new file (a new registration id); the relay's directory answers Alice's
/// request as stale; Alice archives the session, which stays archived across a reopen, fetches
/// the new bundle and Bob's new installation reads the message.
final class DeviceListStorageTests: XCTestCase {
    private func open(_ path: String, identity: IdentityKeyPair? = nil) throws -> SQLiteProtocolStore {
        try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), identity: identity)
    }

    func testAStaleDeviceIsArchivedDurablyAndReachedAgainThroughANewBundle() async throws {
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        let alice = address("alice", 1), bob = address("bob", 1)
        var aliceStore = try open(alicePath)
        var aliceManager = SessionManager(store: aliceStore, trust: aliceStore, localAddress: alice)
        let bobStore = try open(folder.appendingPathComponent("bob.sqlite").path)
        let bobManager = SessionManager(store: bobStore, trust: bobStore, localAddress: bob)

        // The relay: Bob's published prekeys and his directory.
        var published = try PublishedPreKeys(registering: try await bobManager.maintainPreKeys())
        var directory = DeviceDirectory([1: published])
        try await aliceManager.processBundle(published.takeBundle(), for: bob)
        let first = try await aliceManager.encrypt(Array("before".utf8), to: bob)
        _ = try await bobManager.decrypt(first, from: alice)
        let accepted = try directory.check(try await aliceManager.deviceListRequest(forUser: "bob"), excludingSenderDevice: nil)
        XCTAssertTrue(accepted.isEmpty)

        // Bob restores his identity into a new file: a new registration id, registered again.
        let identity = try await bobStore.localIdentity()
        try bobStore.close()
        let restoredStore = try open(folder.appendingPathComponent("bob-restored.sqlite").path, identity: identity)
        defer { try? restoredStore.close() }
        let restored = SessionManager(store: restoredStore, trust: restoredStore, localAddress: bob)
        let upload = try await restored.maintainPreKeys()
        XCTAssertThrowsError(try published.merge(upload)) {
            guard case .otherRegistration = $0 as? PublishedPreKeysError else { return XCTFail("\($0)") }
        }
        published = try PublishedPreKeys(registering: upload)
        directory.register(1, registrationID: published.registrationID)

        let mismatch = try directory.check(try await aliceManager.deviceListRequest(forUser: "bob"), excludingSenderDevice: nil)
        XCTAssertEqual(mismatch, DeviceListMismatch(stale: [1]))
        let toFetch = try await aliceManager.applyDeviceListMismatch(mismatch, forUser: "bob")
        XCTAssertEqual(toFetch, [1])

        // The archived session is in the file: after a reopen there is still nothing to send on.
        try aliceStore.close()
        aliceStore = try open(alicePath)
        defer { try? aliceStore.close() }
        aliceManager = SessionManager(store: aliceStore, trust: aliceStore, localAddress: alice)
        let afterReopen = try await aliceManager.deviceListRequest(forUser: "bob")
        XCTAssertEqual(afterReopen, [:])
        let sendError = await thrownError { _ = try await aliceManager.encrypt(Array("lost".utf8), to: bob) }
        XCTAssertEqual(sendError as? SessionError, .noSession)

        let bundle = published.takeBundle()
        let outcomes = try await aliceManager.encrypt(
            Array("after".utf8), toUser: "bob", devices: directory.deviceIDs, fetchingBundles: { _ in bundle })
        XCTAssertEqual(outcomes.map(\.address), [bob])
        let envelope = try XCTUnwrap(outcomes.first?.envelope)
        let received = try await restored.receive(envelope)
        XCTAssertEqual(received.plaintext, Array("after".utf8))
        let final = try directory.check(try await aliceManager.deviceListRequest(forUser: "bob"), excludingSenderDevice: nil)
        XCTAssertTrue(final.isEmpty)
    }
}
