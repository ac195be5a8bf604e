import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Replenishment from the count the server reports (`SessionManager.replenishPreKeys`,
/// `LocalPreKeys.replenish(serverOneTimePreKeyCount:…)`): a server that hands bundles out
/// without them being used cannot keep the stock empty, and what the device holds stays bounded.
final class PreKeyReplenishmentTests: XCTestCase {
    private let bob = address("bob", 1)

    private func manager() throws -> SessionManager {
        let store = InMemoryProtocolStore(identity: try IdentityKeyPair())
        return SessionManager(store: store, trust: TestTrustEvaluator(), localAddress: bob)
    }

    func testAServerThatHandsOutUnusedBundlesIsRefilledFromItsOwnCount() async throws {
        let bobManager = try manager()
        var published = try PublishedPreKeys(registering: try await bobManager.maintainPreKeys())
        // The server hands out 45 bundles nobody uses: it holds 5, Bob still holds 50.
        var handedOut: [PreKeyBundle] = []
        for _ in 0 ..< 45 { handedOut.append(published.takeBundle()) }
        XCTAssertEqual(published.oneTimePreKeyCount, 5)
        let held = try await bobManager.store.loadPreKeys()?.oneTimePreKeyCount
        XCTAssertEqual(held, 50)
        let fromHeldCount = try await bobManager.maintainPreKeys()
        XCTAssertTrue(fromHeldCount.isEmpty, "the count held says nothing is missing")

        let upload = try await bobManager.replenishPreKeys(serverOneTimePreKeyCount: published.oneTimePreKeyCount)
        XCTAssertEqual(upload.oneTimePreKeys.count, 45, "back to a full batch on the server")
        XCTAssertNil(upload.signedPreKey)
        let registrationID = try await bobManager.localRegistrationID()
        XCTAssertEqual(upload.registrationID, registrationID)
        try published.merge(upload)
        XCTAssertEqual(published.oneTimePreKeyCount, 50)
        let heldAfter = try await bobManager.store.loadPreKeys()?.oneTimePreKeyCount
        XCTAssertEqual(heldAfter, 95, "the keys handed out are still held for their sessions")

        // A count at or above the low-water mark asks for nothing.
        let enough = try await bobManager.replenishPreKeys(serverOneTimePreKeyCount: 20)
        XCTAssertTrue(enough.isEmpty)

        // A bundle handed out before the refill and one of the new keys both start sessions.
        let alice = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: TestTrustEvaluator(), localAddress: address("alice", 1))
        let carol = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: TestTrustEvaluator(), localAddress: address("carol", 1))
        try await alice.processBundle(handedOut[0], for: bob)
        let fromAlice = try await bobManager.decrypt(try await alice.encrypt(Array("old key".utf8), to: bob), from: address("alice", 1))
        XCTAssertEqual(fromAlice.plaintext, Array("old key".utf8))
        for _ in 0 ..< 5 { _ = published.takeBundle() }
        let newBundle = published.takeBundle()
        XCTAssertTrue(upload.oneTimePreKeys.map(\.id).contains(try XCTUnwrap(newBundle.oneTimePreKey?.id)))
        try await carol.processBundle(newBundle, for: bob)
        let fromCarol = try await bobManager.decrypt(try await carol.encrypt(Array("new key".utf8), to: bob), from: address("carol", 1))
        XCTAssertEqual(fromCarol.plaintext, Array("new key".utf8))
    }

    func testKeysHandedOutAndNeverUsedDoNotPileUp() throws {
        let random = SeededRandomSource(seed: 7)
        let identity = try IdentityKeyPair(using: random)
        var keys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 0), random: random)
        let firstIDs = keys.oneTimePreKeys.map(\.id)
        let limit = LocalPreKeys.heldOneTimePreKeyLimit(policy: .default)
        XCTAssertEqual(limit, 500)
        // A server that drains its whole stock before every report.
        for _ in 0 ..< 30 {
            let upload = try keys.replenish(serverOneTimePreKeyCount: 0, identity: identity, random: random)
            XCTAssertEqual(upload.oneTimePreKeys.count, 50)
            XCTAssertLessThanOrEqual(keys.oneTimePreKeyCount, limit)
        }
        XCTAssertEqual(keys.oneTimePreKeyCount, limit)
        XCTAssertTrue(Set(keys.oneTimePreKeys.map(\.id)).isDisjoint(with: firstIDs), "the oldest go first")
        XCTAssertThrowsError(try keys.replenish(serverOneTimePreKeyCount: -1, identity: identity, random: random)) {
            guard case .invalidConfiguration = $0 as? SessionError else { return XCTFail("\($0)") }
        }
    }

    func testWithoutPrekeysTheFirstReplenishmentUploadsEverything() async throws {
        let bobManager = try manager()
        let upload = try await bobManager.replenishPreKeys(serverOneTimePreKeyCount: 0)
        XCTAssertNotNil(upload.signedPreKey)
        XCTAssertEqual(upload.oneTimePreKeys.count, 50)
    }
}

/// `LocalPreKeys.discardForRestoredStore()`, which a store that found its file restored from an
/// older copy runs (SessionKitSQLite's restore detection): no one-time key survives, the signed
/// prekey rotates at the next upkeep, and no id the lost copy may have issued comes back.
final class RestoredPreKeysTests: XCTestCase {
    func testARestoredSetRotatesAtTheNextUpkeepWithIdsAheadOfTheLostCopy() throws {
        let random = SeededRandomSource(seed: 11)
        let identity = try IdentityKeyPair(using: random)
        let start = Timestamp(secondsSince1970: 1_700_000_000)
        var keys = try LocalPreKeys(identity: identity, now: start, random: random)
        let (nextSigned, nextOneTime) = (keys.nextSignedPreKeyID, keys.nextOneTimePreKeyID)
        let signedID = keys.currentSignedPreKey.key.id

        keys.discardForRestoredStore()
        XCTAssertEqual(keys.oneTimePreKeyCount, 0)
        XCTAssertEqual(keys.nextSignedPreKeyID, nextSigned + LocalPreKeys.restoreIDJump)
        XCTAssertEqual(keys.nextOneTimePreKeyID, nextOneTime + LocalPreKeys.restoreIDJump)
        XCTAssertTrue(keys.isSignedPreKeyRotationDue(now: start), "due at once, whatever the clock says")
        // The state persists as it is (a store writes it in the opening transaction).
        let reloaded = try LocalPreKeys(serialized: keys.serialized())
        XCTAssertTrue(reloaded.isSignedPreKeyRotationDue(now: start))

        // A minute later the upkeep rotates it and refills the batch, with ids past the jump.
        let upload = try keys.maintain(identity: identity, now: start.adding(seconds: 60), random: random)
        let newSigned = try XCTUnwrap(upload.signedPreKey)
        XCTAssertEqual(newSigned.id, nextSigned + LocalPreKeys.restoreIDJump)
        XCTAssertEqual(upload.oneTimePreKeys.map(\.id), Array((nextOneTime + LocalPreKeys.restoreIDJump) ..< (nextOneTime + LocalPreKeys.restoreIDJump + 50)))
        XCTAssertEqual(keys.previousSignedPreKeys.map(\.key.id), [signedID], "the replaced key is kept for messages in flight")
    }

    func testTheIdCountersWrapPastZero() throws {
        let random = SeededRandomSource(seed: 12)
        let identity = try IdentityKeyPair(using: random)
        let keys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 0), random: random)
        var high = keys
        for _ in 0 ..< 256 { high.discardForRestoredStore() }
        // 256 jumps of 2^24 wrap the 32-bit counter exactly once: 0 is skipped, so it lands one further.
        XCTAssertEqual(high.nextOneTimePreKeyID, keys.nextOneTimePreKeyID + 1)
        XCTAssertNotEqual(high.nextSignedPreKeyID, 0)
    }
}
