import SessionKit

/// The generations of session records (`StoreConformanceRule.sessionGenerations`,
/// `.generationsAfterDeletion`).
enum SessionRules {
    static func generations(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let alice = try await f.peer("conformance-alice")
        try await f.startSession(to: alice)
        let first = try await f.session(with: alice.address, "after the first commit")
        try c.expect(first.generation >= 1, "a stored record has generation \(first.generation): a commit stores generation + 1, so at least 1")
        try await c.run("encrypting (a second commit)") { _ = try await f.bob.encrypt(Array("one".utf8), to: alice.address) }
        let current = try await f.session(with: alice.address, "after the second commit")
        try c.expect(current.generation == first.generation + 1,
                     "a commit stored generation \(current.generation) over \(first.generation), expected \(first.generation + 1)")

        let view = { () async throws(StoreConformanceFailure) -> StoreView in try await f.view(sessions: [alice.address]) }
        var stale = StoreCommit()
        stale.store(first, for: alice.address)
        try await c.refusesCommit(stale, with: .staleState, "a commit of a record loaded before the last commit", on: f.store, unchanged: view)
        var zero = current
        zero.generation = 0
        var fresh = StoreCommit()
        fresh.store(zero, for: alice.address)
        try await c.refusesCommit(fresh, with: .staleState, "a commit of a record with generation 0 over a stored one", on: f.store, unchanged: view)
        var ahead = current
        ahead.generation = current.generation + 1
        var future = StoreCommit()
        future.store(ahead, for: alice.address)
        try await c.refusesCommit(future, with: .staleState, "a commit of a record with a generation ahead of the stored one", on: f.store, unchanged: view)

        var good = StoreCommit()
        good.store(current, for: alice.address)
        try await c.run("a commit of the current record") { try await f.store.commit(good) }
        let advanced = try await f.session(with: alice.address, "after committing the current record")
        try c.expect(advanced.generation == current.generation + 1,
                     "committing the current record stored generation \(advanced.generation), expected \(current.generation + 1)")
        try c.expect(advanced.serialized() == current.serialized(), "the committed record does not load as it was committed")
        // The manager goes on from the stored record.
        try await c.run("encrypting after the direct commits") { _ = try await f.bob.encrypt(Array("two".utf8), to: alice.address) }
    }

    static func generationsAfterDeletion(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let alice = try await f.peer("conformance-alice")
        try await f.startSession(to: alice)
        for index in 0 ..< 3 {
            try await c.run("encrypting") { _ = try await f.bob.encrypt(Array("old \(index)".utf8), to: alice.address) }
        }
        let old = try await f.session(with: alice.address, "before the deletion")
        try await c.run("deleting the session record") { try await f.store.deleteSession(for: alice.address) }
        let deleted = try await c.run("loading a deleted record") { try await f.store.loadSession(for: alice.address) }
        try c.expect(deleted == nil, "a deleted session record still loads")
        let devices = try await c.run("listing the peer's devices") { try await f.store.deviceIDs(ofUser: alice.address.userID) }
        try c.expect(devices.isEmpty, "deviceIDs(ofUser:) still lists \(devices) after the deletion")

        try await f.startSession(to: alice)
        let new = try await f.session(with: alice.address, "after a new session")
        try c.expect(new.generation > old.generation,
                     "the record written after the deletion has generation \(new.generation), not above the deleted one's \(old.generation)")
        let view = { () async throws(StoreConformanceFailure) -> StoreView in try await f.view(sessions: [alice.address]) }
        for index in 0 ... old.generation {
            var commit = StoreCommit()
            commit.store(old, for: alice.address)
            try await c.refusesCommit(commit, with: .staleState, "a commit of a record loaded before the deletion", on: f.store, unchanged: view)
            try await c.run("encrypting on the new session") { _ = try await f.bob.encrypt(Array("new \(index)".utf8), to: alice.address) }
        }

        // The same for the chains received from a sender.
        let group = try await f.group("conformance-deletion")
        let state = try await SenderKeyRules.receiveDistribution(from: alice, in: group, f)
        try await c.run("removing the receiver state") { try await f.store.removeReceiverState(for: group, sender: alice.address) }
        let removed = try await c.run("loading a removed receiver state") { try await f.store.loadReceiverState(for: group, sender: alice.address) }
        try c.expect(removed == nil, "a removed receiver state still loads")
        var commit = StoreCommit()
        commit.store(state, for: group, sender: alice.address)
        let groupView = { () async throws(StoreConformanceFailure) -> StoreView in
            try await f.view(groups: [group], senders: [alice.address])
        }
        try await c.refusesCommit(commit, with: .staleState, "a commit of a receiver state loaded before its removal", on: f.store, unchanged: groupView)
        let distribution = try await c.run("making a distribution") { try await alice.manager.senderKeyDistributionMessage(for: group) }
        try await c.run("processing the distribution again") {
            try await f.bob.processSenderKeyDistribution(distribution.serialized, for: group, from: alice.address)
        }
        let again = try await c.run("loading the receiver state") { try await f.store.loadReceiverState(for: group, sender: alice.address) }
        try c.expect((again?.generation ?? 0) > state.generation,
                     "the receiver state written after the removal has generation \(again?.generation ?? 0), not above the removed one's \(state.generation)")
        try await c.refusesCommit(commit, with: .staleState, "a commit of a receiver state loaded before its removal", on: f.store, unchanged: groupView)
    }
}
