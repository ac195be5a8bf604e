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
            await assertThrows(VerificationError.unknownContact(bob.userID)) { _ = try await store.rejectIdentityChange(forUser: self.bob.userID) }
            _ = try await store.observeIdentity(original, for: bob)
            _ = try await store.observeIdentity(replacement, for: bob)
            await assertThrows(VerificationError.identityKeyMismatch(bob.userID)) {
                try await store.acceptIdentityChange(identityKey(0xb2), forUser: self.bob.userID)
            }
            let status = try await store.status(forUser: bob.userID)
            XCTAssertEqual(status, .unverified, name)
        }
    }

    func testAnotherKeyOnAnUnlistedDeviceIsNotAChangeUidBytesAreSeparateUsersAndRemovingForgets() async throws {
        try await forEachStore { store, name in
            _ = try await store.observeIdentity(original, for: bob)
            let otherDevice = try await store.observeIdentity(replacement, for: address("bob", 2))
            XCTAssertEqual(otherDevice, .unknownDeviceWithOtherKey(recorded: original), "\(name): the listed device keeps the user's key")
            let kept = try await store.record(forUser: bob.userID)
            XCTAssertEqual(kept, TrustRecord(identityKey: original, status: .trusted, previousIdentityKey: nil, devices: [1]), name)
            _ = try await store.observeIdentity(original, for: address("\u{e9}", 1))
            let decomposed = try await store.observeIdentity(replacement, for: address("e\u{301}", 1))
            XCTAssertEqual(decomposed, .firstUse, name)
            try await store.removeRecord(forUser: bob.userID)
            let event = try await store.observeIdentity(replacement, for: bob)
            XCTAssertEqual(event, .firstUse, name)
        }
    }

    // MARK: Third review: one injected prekey message must not take over a contact

    /// The takeover: a message from a device id bob never had, under another key. The record
    /// stays bob's (nothing recorded, sending to bob.1 allowed, nothing to the ghost), the key
    /// is reported distinctly, and accepting bob's key afterwards is a no-op, not a refusal.
    /// Before the fix the ghost's key replaced bob's and only it could be accepted.
    func testAnInjectedKeyOnAnUnknownDeviceLeavesTheRecordAndSendingAlone() async throws {
        try await forEachStore { store, name in
            let ghost = address("bob", 77)
            _ = try await store.observeIdentity(original, for: bob)
            let evaluated = try await store.evaluateIdentity(replacement, for: ghost)
            XCTAssertEqual(evaluated, TrustDecision(observation: .unknownDeviceWithOtherKey(recorded: original), allowsSending: false), name)
            let observed = try await store.recordIdentity(replacement, for: ghost)
            XCTAssertEqual(observed, .unknownDeviceWithOtherKey(recorded: original), name)
            let record = try await store.record(forUser: bob.userID)
            XCTAssertEqual(record, TrustRecord(identityKey: original, status: .trusted, previousIdentityKey: nil, devices: [1]), name)
            let toBob = try await store.evaluateIdentity(original, for: bob)
            XCTAssertEqual(toBob, TrustDecision(observation: .unchanged, allowsSending: true), name)
            try await store.acceptIdentityChange(original, forUser: bob.userID)
            let unchanged = try await store.record(forUser: bob.userID)
            XCTAssertEqual(unchanged, record, name)
        }
    }

    /// A change seen on a listed device awaits acceptance; either key may be accepted. The old
    /// key is restored, trusted, without superseding the pending key (seen again, it is a
    /// change again, not a refusal). Before the fix accepting the old key threw.
    func testWhileAChangeIsPendingTheOldKeyCanBeAcceptedAndIsRestored() async throws {
        try await forEachStore { store, name in
            _ = try await store.observeIdentity(original, for: bob)
            _ = try await store.observeIdentity(original, for: address("bob", 2))
            _ = try await store.observeIdentity(replacement, for: bob)
            let pending = try await store.record(forUser: bob.userID)
            XCTAssertEqual(pending, TrustRecord(
                identityKey: replacement, status: .unverified, previousIdentityKey: original, devices: [1, 2]), name)
            let oldKey = try await store.evaluateIdentity(original, for: address("bob", 2))
            XCTAssertEqual(oldKey, TrustDecision(
                observation: .changed(previous: replacement), allowsSending: false, isKeyBeforePendingChange: true), name)
            try await store.acceptIdentityChange(original, forUser: bob.userID)
            let restored = try await store.record(forUser: bob.userID)
            XCTAssertEqual(restored, TrustRecord(identityKey: original, status: .trusted, previousIdentityKey: nil, devices: [1, 2]), name)
            let toBob = try await store.evaluateIdentity(original, for: bob)
            XCTAssertTrue(toBob.allowsSending, name)
            let pendingAgain = try await store.evaluateIdentity(replacement, for: bob)
            XCTAssertEqual(pendingAgain, TrustDecision(observation: .changed(previous: original), allowsSending: false), name)
        }
    }

    /// Rejecting a pending change returns to the key on record before it and drops the pending
    /// one; with no pending change it changes nothing; with no record it is `unknownContact`.
    func testRejectingAPendingChangeRestoresTheRecordedKey() async throws {
        try await forEachStore { store, name in
            _ = try await store.observeIdentity(original, for: bob)
            try await store.markVerified(original, forUser: bob.userID)
            let nothingPending = try await store.rejectIdentityChange(forUser: bob.userID)
            XCTAssertEqual(nothingPending, original, name)
            let verified = try await store.record(forUser: bob.userID)
            XCTAssertEqual(verified?.status, .verified, "\(name): rejecting without a pending change changes nothing")
            _ = try await store.observeIdentity(replacement, for: bob)
            let restoredKey = try await store.rejectIdentityChange(forUser: bob.userID)
            XCTAssertEqual(restoredKey, original, name)
            let record = try await store.record(forUser: bob.userID)
            XCTAssertEqual(record, TrustRecord(identityKey: original, status: .trusted, previousIdentityKey: nil, devices: [1]), name)
            let allowed = try await store.evaluateIdentity(original, for: bob)
            XCTAssertEqual(allowed, TrustDecision(observation: .unchanged, allowsSending: true), name)
            let dropped = try await store.evaluateIdentity(replacement, for: bob)
            XCTAssertFalse(dropped.isSuperseded, "\(name): the rejected key is dropped, not refused")
        }
    }

    /// A verified contact who reinstalled is re-verified in one step: `markVerified` with the
    /// quarantined key accepts it and marks it verified (the old key superseded). Before the
    /// fix it threw `identityKeyMismatch` until the app had accepted the key.
    func testAVerifiedContactsNewKeyIsReverifiedInOneStep() async throws {
        try await forEachStore { store, name in
            _ = try await store.observeIdentity(original, for: bob)
            try await store.markVerified(original, forUser: bob.userID)
            try await store.markVerified(replacement, forUser: bob.userID)
            let record = try await store.record(forUser: bob.userID)
            XCTAssertEqual(record, TrustRecord(
                identityKey: replacement, status: .verified, previousIdentityKey: nil, devices: [1], supersededIdentityKeys: [original]), name)
            let decision = try await store.evaluateIdentity(replacement, for: bob)
            XCTAssertEqual(decision, TrustDecision(observation: .unchanged, allowsSending: true, isVerified: true), name)
        }
    }

    /// Accepting a quarantined key (a reinstall under a new device id) replaces the user's key
    /// without superseding it: the listed device, if it still presents the old key, is
    /// reported (a change), never silently refused.
    func testAcceptingAQuarantinedKeyNeverRefusesTheKeyListedDevicesUsed() async throws {
        try await forEachStore { store, name in
            let newPhone = address("bob", 5)
            _ = try await store.observeIdentity(original, for: bob)
            let observed = try await store.observeIdentity(replacement, for: newPhone)
            XCTAssertEqual(observed, .unknownDeviceWithOtherKey(recorded: original), name)
            try await store.acceptIdentityChange(replacement, forUser: bob.userID)
            let fromNewPhone = try await store.observeIdentity(replacement, for: newPhone)
            XCTAssertEqual(fromNewPhone, .newDevice, name)
            let record = try await store.record(forUser: bob.userID)
            XCTAssertEqual(record, TrustRecord(identityKey: replacement, status: .trusted, previousIdentityKey: nil, devices: [1, 5]), name)
            let oldPhone = try await store.evaluateIdentity(original, for: bob)
            XCTAssertEqual(oldPhone, TrustDecision(observation: .changed(previous: replacement), allowsSending: false), name)
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
            let operation = random.next() % 10
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
            case 8:
                expected = await outcome { () throws(VerificationError) in try await reference.rejectIdentityChange(forUser: target.userID) }
                actual = await outcome { () throws(VerificationError) in try await sqlite.rejectIdentityChange(forUser: target.userID) }
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
