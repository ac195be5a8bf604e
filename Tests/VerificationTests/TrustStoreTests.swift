@_spi(Testing) import SessionKit
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// Trust on first use (SPEC §7): unverified → trusted (first use) → verified; a changed key
/// drops the contact back and blocks sending until the app accepts the new key.
final class TrustStoreTests: XCTestCase {
    private let bob = address("bob", 1)
    private let original = identityKey(0xb0)
    private let replacement = identityKey(0xb1)

    func testAnUnknownContactIsUnverifiedWithoutARecord() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        let status = try await store.status(forUser: bob.userID)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(status, .unverified)
        XCTAssertNil(record)
    }

    func testTheFirstKeySeenIsTrustedAndTheSameKeyIsUnchanged() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        let first = try await store.observeIdentity(original, for: bob)
        XCTAssertEqual(first, .firstUse)
        let status = try await store.status(forUser: bob.userID)
        XCTAssertEqual(status, .trusted)
        let again = try await store.observeIdentity(original, for: bob)
        XCTAssertEqual(again, .unchanged)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record, TrustRecord(identityKey: original, status: .trusted, previousIdentityKey: nil, devices: [1]))
        let allowed = try await store.evaluateIdentity(original, for: bob).allowsSending
        XCTAssertTrue(allowed)
    }

    func testVerifyingMovesATrustedContactToVerified() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        _ = try await store.observeIdentity(original, for: bob)
        try await store.markVerified(original, forUser: bob.userID)
        let status = try await store.status(forUser: bob.userID)
        XCTAssertEqual(status, .verified)
        let allowed = try await store.evaluateIdentity(original, for: bob).allowsSending
        XCTAssertTrue(allowed)
        try await store.clearVerification(forUser: bob.userID)
        let cleared = try await store.status(forUser: bob.userID)
        XCTAssertEqual(cleared, .trusted)
    }

    func testAChangedKeyDropsAVerifiedContactAndBlocksSendingUntilAccepted() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        let evaluator: any IdentityTrustEvaluator = store
        let firstCheck = try await evaluator.evaluateIdentity(original, for: bob).allowsSending
        XCTAssertTrue(firstCheck)
        let recorded = try await evaluator.recordIdentity(original, for: bob)
        XCTAssertEqual(recorded, .firstUse)
        try await store.markVerified(original, forUser: bob.userID)

        let event = try await store.observeIdentity(replacement, for: bob)
        XCTAssertEqual(event, .changed(previous: original))
        let dropped = try await store.record(forUser: bob.userID)
        XCTAssertEqual(dropped?.status, .unverified)
        XCTAssertEqual(dropped?.identityKey, replacement)
        XCTAssertEqual(dropped?.previousIdentityKey, original)
        XCTAssertEqual(dropped?.isAwaitingAcceptance, true)

        // SessionKit's check refuses the new key, however often it asks; after the change was
        // recorded it observes the (new) key as unchanged.
        for _ in 0 ..< 3 {
            let decision = try await evaluator.evaluateIdentity(replacement, for: bob)
            XCTAssertEqual(decision, TrustDecision(observation: .unchanged, allowsSending: false))
        }
        let stillBlocked = try await store.status(forUser: bob.userID)
        XCTAssertEqual(stillBlocked, .unverified)

        try await store.acceptIdentityChange(replacement, forUser: bob.userID)
        let accepted = try await store.record(forUser: bob.userID)
        XCTAssertEqual(accepted, TrustRecord(
            identityKey: replacement, status: .trusted, previousIdentityKey: nil, devices: [1], supersededIdentityKeys: [original]))
        let allowedAfterAccepting = try await evaluator.evaluateIdentity(replacement, for: bob).allowsSending
        XCTAssertTrue(allowedAfterAccepting)
    }

    func testSessionKitsCheckReportsAChangeAndRefusesTheNewKeyWithoutRecordingIt() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        let evaluator: any IdentityTrustEvaluator = store
        let first = try await evaluator.evaluateIdentity(original, for: bob)
        XCTAssertEqual(first, TrustDecision(observation: .firstUse, allowsSending: true))
        let unrecorded = try await store.record(forUser: bob.userID)
        XCTAssertNil(unrecorded, "evaluating records nothing")
        let recorded = try await evaluator.recordIdentity(original, for: bob)
        XCTAssertEqual(recorded, .firstUse)
        let again = try await evaluator.evaluateIdentity(original, for: bob)
        XCTAssertEqual(again, TrustDecision(observation: .unchanged, allowsSending: true))
        let changed = try await evaluator.evaluateIdentity(replacement, for: bob)
        XCTAssertEqual(changed, TrustDecision(observation: .changed(previous: original), allowsSending: false))
        let stillTrusted = try await store.record(forUser: bob.userID)
        XCTAssertEqual(stillTrusted, TrustRecord(identityKey: original, status: .trusted, previousIdentityKey: nil, devices: [1]),
                       "a refused key changes nothing")
        let recordedChange = try await evaluator.recordIdentity(replacement, for: bob)
        XCTAssertEqual(recordedChange, .changed(previous: original))
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record?.previousIdentityKey, original)
        XCTAssertEqual(record?.status, .unverified)
    }

    /// Issue #11's report: after Alice verified Bob, a forged or stale bundle for Bob must be
    /// refused without making Bob unverified or blocking the genuine session.
    func testEvaluatingAnotherKeyLeavesAVerifiedContactVerified() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        try await store.markVerified(original, forUser: bob.userID)
        for _ in 0 ..< 3 {
            let decision = try await store.evaluateIdentity(replacement, for: bob)
            XCTAssertFalse(decision.allowsSending)
        }
        let status = try await store.status(forUser: bob.userID)
        XCTAssertEqual(status, .verified)
        let allowed = try await store.evaluateIdentity(original, for: bob).allowsSending
        XCTAssertTrue(allowed)
    }

    /// While a change awaits acceptance, the key it would replace is reported (sending stays
    /// refused) but recorded as nothing: the app still chooses between the two keys.
    func testTheKeyBeforeAPendingChangeIsReportedAndChangesNothing() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        _ = try await store.observeIdentity(original, for: bob)
        _ = try await store.observeIdentity(replacement, for: bob)
        let pending = try await store.record(forUser: bob.userID)
        let back = try await store.observeIdentity(original, for: bob)
        XCTAssertEqual(back, .changed(previous: replacement))
        let decision = try await store.evaluateIdentity(original, for: bob)
        XCTAssertFalse(decision.allowsSending)
        XCTAssertTrue(decision.isKeyBeforePendingChange)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record, pending, "the pending change is left for the app to decide")
        XCTAssertEqual(record?.previousIdentityKey, original)
    }

    /// A third key while a change awaits acceptance: accepting the pending key that was
    /// replaced again fails (ask the user about the newest); the key the app last accepted
    /// stays the one a rejection restores.
    func testAcceptingAKeyOtherThanEitherKeyOfThePendingChangeFails() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        let third = identityKey(0xb2)
        _ = try await store.observeIdentity(original, for: bob)
        _ = try await store.observeIdentity(replacement, for: bob)
        let again = try await store.observeIdentity(third, for: bob)
        XCTAssertEqual(again, .changed(previous: replacement))
        do {
            try await store.acceptIdentityChange(replacement, forUser: bob.userID)
            XCTFail("accepting a key that changed again must fail")
        } catch {
            XCTAssertEqual(error, .identityKeyMismatch(bob.userID))
        }
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record?.status, .unverified)
        XCTAssertEqual(record?.identityKey, third)
        XCTAssertEqual(record?.previousIdentityKey, original, "the accepted key, not the unanswered first change")
    }

    func testVerifyingTheNewKeyAcceptsTheChange() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        _ = try await store.observeIdentity(original, for: bob)
        _ = try await store.observeIdentity(replacement, for: bob)
        try await store.markVerified(replacement, forUser: bob.userID)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record, TrustRecord(
            identityKey: replacement, status: .verified, previousIdentityKey: nil, devices: [1], supersededIdentityKeys: [original]))
        let allowed = try await store.evaluateIdentity(replacement, for: bob).allowsSending
        XCTAssertTrue(allowed)
    }

    /// Third review: a verified contact who reinstalled is re-verified in one step. Its new key
    /// was quarantined (not recorded); verifying it accepts it and marks it verified, the old
    /// key superseded. It failed with `identityKeyMismatch` until the app accepted first.
    func testVerifyingAVerifiedContactsNewKeyAcceptsItInOneStep() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        _ = try await store.observeIdentity(original, for: bob)
        try await store.markVerified(original, forUser: bob.userID)
        let quarantined = try await store.evaluateIdentity(replacement, for: bob)
        XCTAssertEqual(quarantined.observation, .changed(previous: original))
        try await store.markVerified(replacement, forUser: bob.userID)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record, TrustRecord(
            identityKey: replacement, status: .verified, previousIdentityKey: nil, devices: [1], supersededIdentityKeys: [original]))
        let decision = try await store.evaluateIdentity(replacement, for: bob)
        XCTAssertEqual(decision, TrustDecision(observation: .unchanged, allowsSending: true, isVerified: true))
    }

    func testVerifyingAnUnknownContactRecordsTheKeyAsVerified() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        try await store.markVerified(original, forUser: bob.userID)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record, TrustRecord(identityKey: original, status: .verified, previousIdentityKey: nil))
    }

    func testAnUnknownUsersKeyCanBeAcceptedButNotCleared() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        try await store.acceptIdentityChange(original, forUser: bob.userID)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record, TrustRecord(identityKey: original, status: .trusted, previousIdentityKey: nil))
        do {
            try await store.clearVerification(forUser: "carol")
            XCTFail("no record to clear")
        } catch {
            XCTAssertEqual(error, .unknownContact("carol"))
        }
    }

    /// Issue 17's ghost device, and the third review's takeover: a device id the user never
    /// had, with another key, is neither a first use nor a change of the user's key (the
    /// listed device still presents the recorded key). Nothing is recorded, nothing is sent to
    /// the ghost, and sending to the real device goes on. It used to replace the user's key.
    func testAnotherKeyOnAnUnlistedDeviceLeavesTheUsersRecordAlone() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        _ = try await store.observeIdentity(original, for: bob)
        let before = try await store.record(forUser: bob.userID)
        let ghost = address("bob", 99)
        let decision = try await store.evaluateIdentity(replacement, for: ghost)
        XCTAssertEqual(decision.observation, .unknownDeviceWithOtherKey(recorded: original))
        XCTAssertFalse(decision.allowsSending)
        let event = try await store.observeIdentity(replacement, for: ghost)
        XCTAssertEqual(event, .unknownDeviceWithOtherKey(recorded: original))
        let after = try await store.record(forUser: bob.userID)
        XCTAssertEqual(after, before)
        let toTheRealDevice = try await store.evaluateIdentity(original, for: bob)
        XCTAssertEqual(toTheRealDevice, TrustDecision(observation: .unchanged, allowsSending: true))
    }

    func testTheUsersKeyOnANewDeviceIsANewDeviceWithTheUsersStatus() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        _ = try await store.observeIdentity(original, for: bob)
        try await store.markVerified(original, forUser: bob.userID)
        let tablet = address("bob", 2)
        let decision = try await store.evaluateIdentity(original, for: tablet)
        XCTAssertEqual(decision, TrustDecision(observation: .newDevice, allowsSending: true, isVerified: true))
        let event = try await store.observeIdentity(original, for: tablet)
        XCTAssertEqual(event, .newDevice)
        let again = try await store.observeIdentity(original, for: tablet)
        XCTAssertEqual(again, .unchanged)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record, TrustRecord(identityKey: original, status: .verified, previousIdentityKey: nil, devices: [1, 2]))
    }

    func testUserIDsAreComparedAsBytes() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        let precomposed = address("\u{e9}", 1)
        let decomposed = address("e\u{301}", 1)
        _ = try await store.observeIdentity(original, for: precomposed)
        let decomposedEvent = try await store.observeIdentity(replacement, for: decomposed)
        XCTAssertEqual(decomposedEvent, .firstUse)
    }

    func testAcceptingAChangeSupersedesTheOldKey() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        _ = try await store.observeIdentity(original, for: bob)
        _ = try await store.observeIdentity(replacement, for: bob)
        try await store.acceptIdentityChange(replacement, forUser: bob.userID)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record, TrustRecord(
            identityKey: replacement, status: .trusted, previousIdentityKey: nil, devices: [1], supersededIdentityKeys: [original]))
        let old = try await store.evaluateIdentity(original, for: address("bob", 3))
        XCTAssertTrue(old.isSuperseded)
        XCTAssertFalse(old.allowsSending)
        let current = try await store.evaluateIdentity(replacement, for: bob)
        XCTAssertFalse(current.isSuperseded)
        XCTAssertTrue(current.allowsSending)
    }

    /// A quarantined message's key (the record was left verified) can be accepted: it replaces
    /// the verified key, trusted. The replaced key is not superseded (the listed device was
    /// never seen leaving it): if that device still presents it, it is reported as a change,
    /// never silently refused.
    func testAcceptingAKeyNotOnRecordReplacesAVerifiedKeyWithoutRefusingTheOldOne() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        _ = try await store.observeIdentity(original, for: bob)
        try await store.markVerified(original, forUser: bob.userID)
        try await store.acceptIdentityChange(replacement, forUser: bob.userID)
        let record = try await store.record(forUser: bob.userID)
        XCTAssertEqual(record, TrustRecord(
            identityKey: replacement, status: .trusted, previousIdentityKey: nil, devices: [1], supersededIdentityKeys: []))
        let old = try await store.evaluateIdentity(original, for: bob)
        XCTAssertFalse(old.isSuperseded)
        XCTAssertEqual(old.observation, .changed(previous: replacement))
    }

    func testAMalformedUserIDIsRefused() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        do {
            _ = try await store.record(forUser: "")
            XCTFail("an empty user id must be refused")
        } catch {
            XCTAssertEqual(error, .invalidPayload)
        }
    }

    func testRemovingARecordMakesTheNextKeyAFirstUse() async throws {
        let store: any TrustStore = InMemoryTrustStore()
        _ = try await store.observeIdentity(original, for: bob)
        try await store.removeRecord(forUser: bob.userID)
        let event = try await store.observeIdentity(replacement, for: bob)
        XCTAssertEqual(event, .firstUse)
    }
}

/// The per-user safety-number helper.
final class SafetyNumberHelperTests: XCTestCase {
    func testTheHelperUsesTheUsersKeyOnRecordAndBothSidesAgree() async throws {
        let generator = try FingerprintGenerator()
        let alice = try IdentityKeyPair()
        let bob = try IdentityKeyPair()
        let aliceTrust = InMemoryTrustStore()
        let bobTrust = InMemoryTrustStore()
        _ = await aliceTrust.observeIdentity(bob.publicKey, for: address("bob", 2))
        _ = await bobTrust.observeIdentity(alice.publicKey, for: address("alice", 1))
        let atAlice = try await aliceTrust.safetyNumber(
            withUser: "bob", localUserID: "alice", localIdentityKey: alice.publicKey, generator: generator)
        let atBob = try await bobTrust.safetyNumber(
            withUser: "alice", localUserID: "bob", localIdentityKey: bob.publicKey, generator: generator)
        XCTAssertEqual(atAlice.displayable, atBob.displayable)
        let direct = generator.fingerprint(
            version: 2, localUserID: "alice", localIdentityKey: alice.publicKey, remoteUserID: "bob", remoteIdentityKey: bob.publicKey)
        XCTAssertEqual(atAlice.displayable, direct.displayable)
        do {
            _ = try await aliceTrust.safetyNumber(withUser: "carol", localUserID: "alice", localIdentityKey: alice.publicKey, generator: generator)
            XCTFail("no record for carol")
        } catch {
            XCTAssertEqual(error, .unknownContact("carol"))
        }
    }
}
