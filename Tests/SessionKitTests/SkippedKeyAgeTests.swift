import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Skipped message keys expire by age (`SessionConfiguration.skippedKeyMaxAge`, 30 days by
/// default) besides the `maxStored` bound: each key keeps the time it was stored, persisted.
final class SkippedKeyAgeTests: XCTestCase {
    func testTheDefaultIsThirtyDaysAndANonPositiveAgeIsRefused() throws {
        XCTAssertEqual(SessionConfiguration.default.skippedKeyMaxAge, 30 * 24 * 3600)
        XCTAssertThrowsError(try SessionConfiguration(skippedKeyMaxAge: 0))
        XCTAssertEqual(try SessionConfiguration(skippedKeyMaxAge: 60).skippedKeyMaxAge, 60)
    }

    func testAKeyOlderThanTheLimitNoLongerDecryptsAndIsDeletedWithTheNextMessage() async throws {
        let server = FakeServer()
        let clock = FakeClock()
        let alice = try await TestDevice("alice", 1, seed: 6100, server: server, clock: clock)
        let bob = try await TestDevice("bob", 1, seed: 6101, server: server, clock: clock)
        try await alice.startSession(with: bob.address, server: server)
        var sent: [[UInt8]] = []
        for index in 0 ..< 4 { sent.append(try await alice.manager.encrypt(utf8("message \(index)"), to: bob.address)) }
        // Bob reads the last: the first three are skipped, their keys stored now.
        _ = try await bob.manager.decrypt(sent[3], from: alice.address)
        let held = { () async -> Int in await bob.base.loadSession(for: alice.address)?.currentSession?.ratchet.skippedKeys.count ?? -1 }
        let initial = await held()
        XCTAssertEqual(initial, 3)

        // 29 days later a late message still decrypts.
        clock.advance(bySeconds: Days.seconds(29))
        let late = try await bob.manager.decrypt(sent[0], from: alice.address)
        XCTAssertEqual(late.plaintext, utf8("message 0"))
        let afterLate = await held()
        XCTAssertEqual(afterLate, 2)

        // Past 30 days: the keys no longer decrypt (nothing changes when it fails) ...
        clock.advance(bySeconds: Days.seconds(2))
        let before = await bob.snapshot()
        do {
            _ = try await bob.manager.decrypt(sent[1], from: alice.address)
            XCTFail("a key older than skippedKeyMaxAge decrypted")
        } catch {}
        let afterFailure = await bob.snapshot()
        XCTAssertEqual(afterFailure, before)
        // ... and the next message Bob reads deletes them.
        let next = try await alice.manager.encrypt(utf8("next"), to: bob.address)
        _ = try await bob.manager.decrypt(next, from: alice.address)
        let afterNext = await held()
        XCTAssertEqual(afterNext, 0)
    }

    func testTheTimesArePersistedWithTheSession() async throws {
        let server = FakeServer()
        let clock = FakeClock()
        let alice = try await TestDevice("alice", 1, seed: 6200, server: server, clock: clock)
        let bob = try await TestDevice("bob", 1, seed: 6201, server: server, clock: clock)
        try await alice.startSession(with: bob.address, server: server)
        var sent: [[UInt8]] = []
        for index in 0 ..< 3 { sent.append(try await alice.manager.encrypt(utf8("message \(index)"), to: bob.address)) }
        _ = try await bob.manager.decrypt(sent[2], from: alice.address)
        let loaded = await bob.base.loadSession(for: alice.address)
        let record = try XCTUnwrap(loaded)
        let restored = try SessionRecord(serialized: record.serialized())
        let session = try XCTUnwrap(restored.currentSession)
        XCTAssertEqual(session.ratchet.skippedKeys.storedTimesInAgeOrder, [clock.now().secondsSince1970, clock.now().secondsSince1970])
        // A session written before the times were kept (version 4) loads them as unknown.
        XCTAssertEqual(SessionState.persistenceVersion, 5)
    }
}
