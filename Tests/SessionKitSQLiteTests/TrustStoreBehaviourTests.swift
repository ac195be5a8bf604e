import Foundation
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// The SQLite trust store behaves exactly like `InMemoryTrustStore`: the scenarios of
/// VerificationTests' `TrustStoreTests`, run against both stores, and a long random sequence of
/// calls whose every result (and error) must agree.
final class TrustStoreBehaviourTests: XCTestCase {
    private let bob = address("bob", 1)
    private let original = identityKey(0xb0)
    private let replacement = identityKey(0xb1)

    /// Runs `scenario` against a new `InMemoryTrustStore` and a new SQLite store.
    private func forEachStore(_ scenario: (any TrustStore, String) async throws -> Void) async throws {
        try await scenario(InMemoryTrustStore(), "in memory")
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        try await scenario(store, "SQLite")
    }

    func testAnUnknownContactIsUnverifiedWithoutARecord() async throws {
        try await forEachStore { store, name in
            let status = try await store.status(forUser: bob.userID)
            let record = try await store.record(forUser: bob.userID)
            XCTAssertEqual(status, .unverified, name)
            XCTAssertNil(record, name)
        }
    }

    func testTheFirstKeySeenIsTrustedAndTheSameKeyIsUnchanged() async throws {
        try await forEachStore { store, name in
            let first = try await store.observeIdentity(original, for: bob)
            XCTAssertEqual(first, .firstUse, name)
            let status = try await store.status(forUser: bob.userID)
            XCTAssertEqual(status, .trusted, name)
            let again = try await store.observeIdentity(original, for: bob)
            XCTAssertEqual(again, .unchanged, name)
            let record = try await store.record(forUser: bob.userID)
            XCTAssertEqual(record, TrustRecord(identityKey: original, status: .trusted, previousIdentityKey: nil, devices: [1]), name)
            let allowed = try await store.evaluateIdentity(original, for: bob).allowsSending
            XCTAssertTrue(allowed, name)
        }
    }

    func testVerifyingMovesATrustedContactToVerified() async throws {
        try await forEachStore { store, name in
            _ = try await store.observeIdentity(original, for: bob)
            try await store.markVerified(original, forUser: bob.userID)
            let status = try await store.status(forUser: bob.userID)
            XCTAssertEqual(status, .verified, name)
            try await store.clearVerification(forUser: bob.userID)
            let cleared = try await store.status(forUser: bob.userID)
            XCTAssertEqual(cleared, .trusted, name)
        }
    }

    func testAChangedKeyDropsAVerifiedContactAndBlocksSendingUntilAccepted() async throws {
        try await forEachStore { store, name in
            let evaluator: any IdentityTrustEvaluator = store
            let recorded = try await evaluator.recordIdentity(original, for: bob)
            XCTAssertEqual(recorded, .firstUse, name)
            try await store.markVerified(original, forUser: bob.userID)
            let event = try await store.observeIdentity(replacement, for: bob)
            XCTAssertEqual(event, .changed(previous: original), name)
            let dropped = try await store.record(forUser: bob.userID)
            XCTAssertEqual(dropped, TrustRecord(identityKey: replacement, status: .unverified, previousIdentityKey: original, devices: [1]), name)
            for _ in 0 ..< 3 {
                let decision = try await evaluator.evaluateIdentity(replacement, for: bob)
                XCTAssertEqual(decision, TrustDecision(observation: .unchanged, allowsSending: false), name)
            }
            try await store.acceptIdentityChange(replacement, forUser: bob.userID)
            let accepted = try await store.record(forUser: bob.userID)
            XCTAssertEqual(accepted, TrustRecord(
                identityKey: replacement, status: .trusted, previousIdentityKey: nil, devices: [1], supersededIdentityKeys: [original]), name)
            let allowed = try await evaluator.evaluateIdentity(replacement, for: bob).allowsSending
            XCTAssertTrue(allowed, name)
        }
    }

    func testEvaluatingRecordsNothingAndRefusesAChangedKey() async throws {
        try await forEachStore { store, name in
            let first = try await store.evaluateIdentity(original, for: bob)
            XCTAssertEqual(first, TrustDecision(observation: .firstUse, allowsSending: true), name)
            let unrecorded = try await store.record(forUser: bob.userID)
            XCTAssertNil(unrecorded, name)
            _ = try await store.recordIdentity(original, for: bob)
            let changed = try await store.evaluateIdentity(replacement, for: bob)
            XCTAssertEqual(changed, TrustDecision(observation: .changed(previous: original), allowsSending: false), name)
            let still = try await store.record(forUser: bob.userID)
            XCTAssertEqual(still, TrustRecord(identityKey: original, status: .trusted, previousIdentityKey: nil, devices: [1]), name)
        }
    }

    func testMismatchedKeysAndUnknownContactsAreTheSameErrors() async throws {
        try await forEachStore { store, name in
            await assertThrows(VerificationError.unknownContact(bob.userID)) { try await store.clearVerification(forUser: self.bob.userID) }
            _ = try await store.observeIdentity(original, for: bob)
            await assertThrows(VerificationError.identityKeyMismatch(bob.userID)) { try await store.markVerified(self.replacement, forUser: self.bob.userID) }
            _ = try await store.observeIdentity(replacement, for: bob)
            await assertThrows(VerificationError.identityKeyMismatch(bob.userID)) { try await store.acceptIdentityChange(self.original, forUser: self.bob.userID) }
            let status = try await store.status(forUser: bob.userID)
            XCTAssertEqual(status, .unverified, name)
        }
    }

    func testAnotherDevicesKeyIsAChangeUidBytesAreSeparateUsersAndRemovingForgets() async throws {
        try await forEachStore { store, name in
            _ = try await store.observeIdentity(original, for: bob)
            let otherDevice = try await store.observeIdentity(replacement, for: address("bob", 2))
            XCTAssertEqual(otherDevice, .changed(previous: original), "\(name): trust is the user's, another key on another device is a change")
            _ = try await store.observeIdentity(original, for: address("\u{e9}", 1))
            let decomposed = try await store.observeIdentity(replacement, for: address("e\u{301}", 1))
            XCTAssertEqual(decomposed, .firstUse, name)
            try await store.removeRecord(forUser: bob.userID)
            let event = try await store.observeIdentity(replacement, for: bob)
            XCTAssertEqual(event, .firstUse, name)
        }
    }

    /// A random sequence of every call on both stores: every result and every error agrees, and
    /// the SQLite store, reopened, still holds what the in-memory one holds.
    func testARandomSequenceOfCallsGivesTheSameResultsAsTheInMemoryStore() async throws {
        let path = try temporaryStorePath()
        let reference = InMemoryTrustStore()
        var sqlite = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        let addresses = [address("bob", 1), address("bob", 2), address("carol", 1)]
        let keys = [identityKey(1), identityKey(2), identityKey(3)]
        var random = SplitMix64(seed: 0x5e55_10a1)

        func outcome<T: Equatable>(_ body: () async throws(VerificationError) -> T) async -> String {
            do { return "ok \(try await body())" } catch { return "error \(error)" }
        }

        for step in 0 ..< 600 {
            let target = addresses[Int(random.next() % UInt64(addresses.count))]
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let operation = random.next() % 9
            let expected: String, actual: String
            switch operation {
            case 0:
                expected = await outcome { () throws(VerificationError) in await reference.observeIdentity(key, for: target) }
                actual = await outcome { () throws(VerificationError) in try await sqlite.observeIdentity(key, for: target) }
            case 1:
                expected = await outcome { () throws(VerificationError) in await reference.evaluateIdentity(key, for: target) }
                actual = await outcome { () throws(VerificationError) in try await sqlite.evaluateIdentity(key, for: target) }
            case 2:
                expected = await outcome { () throws(VerificationError) in await reference.recordIdentity(key, for: target) }
                actual = await outcome { () throws(VerificationError) in try await sqlite.recordIdentity(key, for: target) }
            case 3:
                expected = await outcome { () throws(VerificationError) in try await reference.markVerified(key, forUser: target.userID) == () }
                actual = await outcome { () throws(VerificationError) in try await sqlite.markVerified(key, forUser: target.userID) == () }
            case 4:
                expected = await outcome { () throws(VerificationError) in try await reference.clearVerification(forUser: target.userID) == () }
                actual = await outcome { () throws(VerificationError) in try await sqlite.clearVerification(forUser: target.userID) == () }
            case 5:
                expected = await outcome { () throws(VerificationError) in try await reference.acceptIdentityChange(key, forUser: target.userID) == () }
                actual = await outcome { () throws(VerificationError) in try await sqlite.acceptIdentityChange(key, forUser: target.userID) == () }
            case 6:
                expected = await outcome { () throws(VerificationError) in try await reference.removeRecord(forUser: target.userID) == () }
                actual = await outcome { () throws(VerificationError) in try await sqlite.removeRecord(forUser: target.userID) == () }
            case 7:
                expected = await outcome { () throws(VerificationError) in try await reference.status(forUser: target.userID) }
                actual = await outcome { () throws(VerificationError) in try await sqlite.status(forUser: target.userID) }
            default:
                expected = await outcome { () throws(VerificationError) in try await reference.record(forUser: target.userID) }
                actual = await outcome { () throws(VerificationError) in try await sqlite.record(forUser: target.userID) }
            }
            XCTAssertEqual(actual, expected, "step \(step): operation \(operation) for \(target) with key \(key.rawRepresentation[0])")
            if step % 150 == 149 {
                try sqlite.close()
                sqlite = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
            }
        }
        for target in addresses {
            let expected = try await reference.record(forUser: target.userID)
            let actual = try await sqlite.record(forUser: target.userID)
            XCTAssertEqual(actual, expected, "\(target)")
        }
    }
}
