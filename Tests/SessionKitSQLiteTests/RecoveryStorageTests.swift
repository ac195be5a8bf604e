import Foundation
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// Recovery (SPEC §9) end to end through `SessionManager` on `SQLiteProtocolStore` files (each
/// store also its manager's trust store), across restarts: a device that lost one peer's session
/// row answers with a notice addressed from its trust record, the limits it noted survive a
/// restart, and the archived session at the peer survives one too.
final class RecoveryStorageTests: XCTestCase {
    private let alice = address("alice", 1)
    private let bob = address("bob", 7)

    private struct Device {
        let address: ProtocolAddress
        let store: SQLiteProtocolStore
        let manager: SessionManager

        init(_ address: ProtocolAddress, path: String) throws {
            self.address = address
            store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(durability: .processCrash))
            manager = SessionManager(store: store, trust: store, localAddress: address)
        }
    }

    func testBobLosesAlicesRowOnDiskAndTheyRecoverAcrossRestarts() async throws {
        let folder = try temporaryFolder()
        let alicePath = folder.appendingPathComponent("alice.sqlite").path
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        var a = try Device(alice, path: alicePath)
        var b = try Device(bob, path: bobPath)
        // Bob's prekeys as his server keeps them.
        var bobPublished = try PublishedPreKeys(registering: try await b.manager.maintainPreKeys())
        try await a.manager.processBundle(bobPublished.takeBundle(), for: bob)
        _ = try await b.manager.receive(try await a.manager.encryptEnvelope(Array("hello".utf8), to: bob))
        _ = try await a.manager.receive(try await b.manager.encryptEnvelope(Array("hi".utf8), to: alice))

        // Bob's row for Alice is lost (his trust record for her stays).
        try await b.store.deleteSession(for: alice)
        let lost = try await b.manager.receive(try await a.manager.encryptEnvelope(Array("lost".utf8), to: bob))
        guard case let .undecryptable(failure) = lost else { return XCTFail("\(lost)") }
        XCTAssertEqual(failure.error, .noSession)
        XCTAssertTrue(failure.startsNewSession)
        let notice = try XCTUnwrap(failure.retryNotice, "addressed with the key of Bob's trust record for Alice")

        // A restart keeps what Bob noted: no second notice for the chain, no second advice.
        try b.store.close()
        b = try Device(bob, path: bobPath)
        let again = try await b.manager.receive(try await a.manager.encryptEnvelope(Array("again".utf8), to: bob))
        guard case let .undecryptable(second) = again else { return XCTFail("\(again)") }
        XCTAssertNil(second.retryNotice)
        XCTAssertFalse(second.startsNewSession)

        // Alice acts on the notice; the archived session survives her restart.
        guard case let .retryNotice(outcome) = try await a.manager.receive(notice),
              case .sessionArchived(peerReregistered: false) = outcome.action else { return XCTFail("not archived") }
        try a.store.close()
        a = try Device(alice, path: alicePath)
        await assertThrows(SessionError.noSession) { _ = try await a.manager.encrypt(Array("x".utf8), to: self.bob) }
        let record = try await a.store.loadSession(for: bob)
        XCTAssertNil(record?.currentSession)
        XCTAssertEqual(record?.previousSessions.first?.isArchived, true)
        let replayed = try await a.manager.receive(notice)
        guard case let .retryNotice(replay) = replayed, case .ignored = replay.action else { return XCTFail("a replay acted: \(replayed)") }

        // Alice starts again from Bob's bundle; Bob reads her in the new session.
        try await a.manager.processBundle(bobPublished.takeBundle(), for: bob)
        let fresh = try await b.manager.receive(try await a.manager.encryptEnvelope(Array("new session".utf8), to: bob))
        XCTAssertEqual(fresh.plaintext, Array("new session".utf8))
        let peerID = try await a.manager.registrationID(of: bob)
        let bobID = try await b.store.localRegistrationID()
        XCTAssertEqual(peerID, bobID)
        try a.store.close()
        try b.store.close()
    }
}
