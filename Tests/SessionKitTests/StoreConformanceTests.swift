@_spi(Storage) import SessionKit
import SessionKitStoreConformance
import TestSupport
import XCTest

/// The store conformance kit (`SessionKitStoreConformance`): the reference store passes every
/// rule, and stores that break the contract the way a hand-written store could are caught.
final class StoreConformanceTests: XCTestCase {
    func testTheInMemoryStorePassesEveryRule() async {
        let failures = await StoreConformance.failures { InMemoryProtocolStore(identity: try IdentityKeyPair()) }
        XCTAssertEqual(failures, [])
    }

    func testTheKitCatchesAStoreThatDropsTheCompareAndSwap() async {
        // Last writer wins: every state is saved over the stored one, as a naive Core Data
        // store that saves the objects it is given would.
        let failures = await StoreConformance.failures {
            LastWriterWinsStore(base: InMemoryProtocolStore(identity: try IdentityKeyPair()))
        }
        let broken = Set(failures.map(\.rule))
        XCTAssertTrue(broken.isSuperset(of: [
            .sessionGenerations, .generationsAfterDeletion, .sendingChainGenerations, .receiverStateGenerations, .atomicCommits,
        ]), "\(failures)")
        XCTAssertFalse(broken.contains(.groupMembers), "\(failures)")
        XCTAssertFalse(broken.contains(.pendingGroupMessages), "\(failures)")
        do {
            try await StoreConformance.check { LastWriterWinsStore(base: InMemoryProtocolStore(identity: try IdentityKeyPair())) }
            XCTFail("the broken store passed")
        } catch {
            XCTAssertEqual(error.rule, .sessionGenerations)
            XCTAssertTrue(error.detail.contains("was accepted, expected staleState"), error.detail)
        }
    }

    func testTheKitCatchesAStoreThatForgetsThePreKeyConsumption() async {
        let failures = await StoreConformance.failures {
            PreKeyForgettingStore(base: InMemoryProtocolStore(identity: try IdentityKeyPair()))
        }
        // It loses the replay record too: the prekey message of a deleted session creates another.
        XCTAssertEqual(failures.map(\.rule), [.preKeyConsumption, .replayRecords], "\(failures)")
    }

    func testTheKitCatchesAStoreThatNeverFindsAReplayRecord() async {
        let failures = await StoreConformance.failures {
            ReplayBlindStore(base: InMemoryProtocolStore(identity: try IdentityKeyPair()))
        }
        XCTAssertEqual(failures.map(\.rule), [.replayRecords], "\(failures)")
        XCTAssertTrue(failures.first?.detail.contains("did not add its EK_A record") ?? false, "\(failures)")
    }

    func testTheKitCatchesAStoreThatWritesHalfACommit() async {
        let failures = await StoreConformance.failures {
            HalfCommitStore(base: InMemoryProtocolStore(identity: try IdentityKeyPair()))
        }
        // The session of a commit whose prekey consumption or replay record is refused is written too.
        XCTAssertEqual(failures.map(\.rule), [.atomicCommits, .preKeyConsumption, .replayRecords], "\(failures)")
    }

    func testTheKitCatchesAStoreThatDropsTheRecoveryMarks() async {
        let failures = await StoreConformance.failures {
            MarkDroppingStore(base: InMemoryProtocolStore(identity: try IdentityKeyPair()))
        }
        XCTAssertEqual(failures.map(\.rule), [.recovery], "\(failures)")
        XCTAssertTrue(failures.first?.detail.contains("recovery marks") == true, "\(failures)")
    }

    func testTheKitCatchesAStoreWhoseRegistrationIDChanges() async {
        let failures = await StoreConformance.failures(rules: [.recovery]) {
            DrawingEveryTimeStore(base: InMemoryProtocolStore(identity: try IdentityKeyPair()))
        }
        XCTAssertEqual(failures.map(\.rule), [.recovery], "\(failures)")
    }

    func testAStoreThatCannotBeCreatedFailsEveryRuleItWasAskedFor() async {
        struct Unavailable: Error {}
        let failures = await StoreConformance.failures(rules: [.groupMembers, .preKeyUpdates]) { () async throws -> any ProtocolStore in
            throw Unavailable()
        }
        XCTAssertEqual(failures.map(\.rule), [.groupMembers, .preKeyUpdates])
    }
}

/// Stores each session record rebuilt from its sessions and pin only, as a store that keeps a
/// record in parts and was written before the recovery marks existed would.
actor MarkDroppingStore: ForwardingProtocolStore {
    nonisolated let base: InMemoryProtocolStore

    init(base: InMemoryProtocolStore) { self.base = base }

    func commit(_ commit: StoreCommit) async throws(SessionError) {
        var rewritten = commit
        for write in commit.sessions {
            var record = try SessionRecord(
                restoringCurrentSession: write.record.currentSession, previousSessions: write.record.previousSessions,
                requiresPostQuantum: write.record.requiresPostQuantum)
            record.generation = write.record.generation
            rewritten.store(record, for: write.address)
        }
        try await base.commit(rewritten)
    }
}

/// Draws a new registration id at every call.
actor DrawingEveryTimeStore: ForwardingProtocolStore {
    nonisolated let base: InMemoryProtocolStore

    init(base: InMemoryProtocolStore) { self.base = base }

    func localRegistrationID() -> RegistrationID { .random() }
}

/// Saves every state over the stored one, whatever generation it was loaded with.
actor LastWriterWinsStore: ForwardingProtocolStore {
    nonisolated let base: InMemoryProtocolStore

    init(base: InMemoryProtocolStore) { self.base = base }

    func commit(_ commit: StoreCommit) async throws(SessionError) {
        var rewritten = commit
        for write in commit.sessions {
            var record = write.record
            record.generation = await base.loadSession(for: write.address)?.generation ?? 0
            rewritten.store(record, for: write.address)
        }
        if let write = commit.sendingChain {
            var chain = write.chain
            chain.generation = await base.loadSendingChain(for: write.group)?.generation ?? 0
            rewritten.store(chain, for: write.group)
        }
        if let write = commit.receiverState {
            var state = write.state
            state.generation = await base.loadReceiverState(for: write.group, sender: write.sender)?.generation ?? 0
            rewritten.store(state, for: write.group, sender: write.sender)
        }
        try await base.commit(rewritten)
    }
}

/// Copies the public parts of each commit into a new one, losing the one-time prekeys it uses
/// up (`StoreCommit.applyPreKeyChanges(to:)` never runs).
actor PreKeyForgettingStore: ForwardingProtocolStore {
    nonisolated let base: InMemoryProtocolStore

    init(base: InMemoryProtocolStore) { self.base = base }

    func commit(_ commit: StoreCommit) async throws(SessionError) {
        var copy = StoreCommit()
        for write in commit.sessions { copy.store(write.record, for: write.address) }
        copy.sendingChain = commit.sendingChain
        copy.receiverState = commit.receiverState
        copy.identity = commit.identity
        copy.groupMembers = commit.groupMembers
        copy.pendingGroupMessage = commit.pendingGroupMessage
        copy.releasedPendingGroupMessages = commit.releasedPendingGroupMessages
        copy.expiringPendingGroupMessages = commit.expiringPendingGroupMessages
        try await base.commit(copy)
    }
}

/// Keeps the records (its base does) but never finds one: a store whose lookup reads the wrong
/// place, so that a prekey message whose session was deleted creates another.
actor ReplayBlindStore: ForwardingProtocolStore {
    nonisolated let base: InMemoryProtocolStore

    init(base: InMemoryProtocolStore) { self.base = base }

    func hasRecordedBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) -> Bool { false }
}

/// Writes a commit's session first, in a transaction of its own, then the rest.
actor HalfCommitStore: ForwardingProtocolStore {
    nonisolated let base: InMemoryProtocolStore

    init(base: InMemoryProtocolStore) { self.base = base }

    func commit(_ commit: StoreCommit) async throws(SessionError) {
        guard !commit.sessions.isEmpty else { return try await base.commit(commit) }
        var first = StoreCommit()
        for write in commit.sessions { first.store(write.record, for: write.address) }
        try await base.commit(first)
        try await base.commit(commit.removingSessions())
    }
}
