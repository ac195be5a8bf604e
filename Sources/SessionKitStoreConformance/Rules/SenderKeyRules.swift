@_spi(Storage) import SessionKit

/// The generations of sender-key chains and the index of received chains
/// (`StoreConformanceRule.sendingChainGenerations`, `.receiverStateGenerations`,
/// `.receiverChainIndex`).
enum SenderKeyRules {
    static func sendingChainGenerations(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let group = try await f.group("conformance-sending")
        _ = try await c.run("creating our sending chain") { try await f.bob.senderKeyDistributionMessage(for: group) }
        let first = try await sendingChain(f, group, "after its creation")
        try c.expect(first.generation >= 1, "a stored sending chain has generation \(first.generation), expected at least 1")
        _ = try await c.run("encrypting to the group") { try await f.bob.groupEncrypt(Array("one".utf8), for: group) }
        let current = try await sendingChain(f, group, "after a group message")
        try c.expect(current.generation == first.generation + 1,
                     "a commit stored generation \(current.generation) over \(first.generation), expected \(first.generation + 1)")

        let view = { () async throws(StoreConformanceFailure) -> StoreView in try await f.view(groups: [group]) }
        var stale = StoreCommit()
        stale.store(first, for: group)
        try await c.refusesCommit(stale, with: .staleState, "a commit of a sending chain loaded before the last commit", on: f.store, unchanged: view)
        var zero = current
        zero.generation = 0
        var fresh = StoreCommit()
        fresh.store(zero, for: group)
        try await c.refusesCommit(fresh, with: .staleState, "a commit of a sending chain with generation 0 over a stored one", on: f.store, unchanged: view)
        var good = StoreCommit()
        good.store(current, for: group)
        try await c.run("a commit of the current sending chain") { try await f.store.commit(good) }
        let advanced = try await sendingChain(f, group, "after committing the current chain")
        try c.expect(advanced.generation == current.generation + 1,
                     "committing the current chain stored generation \(advanced.generation), expected \(current.generation + 1)")
    }

    static func receiverStateGenerations(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let alice = try await f.peer("conformance-alice")
        let group = try await f.group("conformance-receiving")
        let first = try await receiveDistribution(from: alice, in: group, f)
        try c.expect(first.generation >= 1, "a stored receiver state has generation \(first.generation), expected at least 1")
        let message = try await c.run("the peer's group message") { try await alice.manager.groupEncrypt(Array("one".utf8), for: group) }
        _ = try await c.run("decrypting the group message") { try await f.bob.groupDecrypt(message, for: group, from: alice.address) }
        let current = try await receiverState(f, group, alice.address, "after a group message")
        try c.expect(current.generation == first.generation + 1,
                     "a commit stored generation \(current.generation) over \(first.generation), expected \(first.generation + 1)")

        let view = { () async throws(StoreConformanceFailure) -> StoreView in
            try await f.view(groups: [group], senders: [alice.address])
        }
        var stale = StoreCommit()
        stale.store(first, for: group, sender: alice.address)
        try await c.refusesCommit(stale, with: .staleState, "a commit of a receiver state loaded before the last commit", on: f.store, unchanged: view)
        var zero = current
        zero.generation = 0
        var fresh = StoreCommit()
        fresh.store(zero, for: group, sender: alice.address)
        try await c.refusesCommit(fresh, with: .staleState, "a commit of a receiver state with generation 0 over a stored one", on: f.store, unchanged: view)
        // Stored under another (group, sender), the same state is new there.
        let other = try await f.group("conformance-receiving-2")
        var elsewhere = StoreCommit()
        elsewhere.store(zero, for: other, sender: alice.address)
        try await c.run("a commit of a new receiver state for another group") { try await f.store.commit(elsewhere) }
        let unchanged = try await receiverState(f, group, alice.address, "after a commit for another group")
        try c.expect(unchanged.generation == current.generation, "a commit for another group changed this group's receiver state")
    }

    static func receiverChainIndex(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let alice = try await f.peer("conformance-alice")
        let group = try await f.group("conformance-index")
        let state = try await receiveDistribution(from: alice, in: group, f)
        guard let chainID = state.chainIDs.first?.rawRepresentation else { throw c.failure("the stored receiver state holds no chain") }
        let held = try await c.run("holdsReceiverChain") { try await f.store.holdsReceiverChain(chainID) }
        try c.expect(held, "holdsReceiverChain is false for the chain of a stored receiver state")
        var other = chainID
        other[0] ^= 0xFF
        let notHeld = try await c.run("holdsReceiverChain") { try await f.store.holdsReceiverChain(other) }
        try c.expect(!notHeld, "holdsReceiverChain is true for a chain id no receiver state holds")
        try await c.run("removing the receiver state") { try await f.store.removeReceiverState(for: group, sender: alice.address) }
        let afterRemoval = try await c.run("holdsReceiverChain") { try await f.store.holdsReceiverChain(chainID) }
        try c.expect(!afterRemoval, "holdsReceiverChain is still true after removeReceiverState")
    }

    /// Makes `peer` a member of `group` for Bob and stores its distribution; returns the stored
    /// receiver state.
    static func receiveDistribution(
        from peer: Peer, in group: GroupID, _ f: Fixture
    ) async throws(StoreConformanceFailure) -> SenderKeyReceiverState {
        let c = f.checker
        try await c.run("setting the group's members") { try await f.bob.setGroupMembers([peer.address], for: group) }
        let members = try await c.run("loading the group's members") { try await f.store.loadGroupMembers(for: group) }
        try c.expect(members == [peer.address], "the group's members load as \(members.count) devices, expected the 1 set")
        let distribution = try await c.run("the peer's distribution") { try await peer.manager.senderKeyDistributionMessage(for: group) }
        try await c.run("processing the distribution") {
            try await f.bob.processSenderKeyDistribution(distribution.serialized, for: group, from: peer.address)
        }
        return try await receiverState(f, group, peer.address, "after a distribution")
    }

    static func sendingChain(_ f: Fixture, _ group: GroupID, _ what: String) async throws(StoreConformanceFailure) -> SenderKeySendingChain {
        let chain = try await f.checker.run("loading the sending chain (\(what))") { try await f.store.loadSendingChain(for: group) }
        guard let chain else { throw f.checker.failure("no sending chain is stored \(what)") }
        return chain
    }

    static func receiverState(
        _ f: Fixture, _ group: GroupID, _ sender: ProtocolAddress, _ what: String
    ) async throws(StoreConformanceFailure) -> SenderKeyReceiverState {
        let state = try await f.checker.run("loading the receiver state (\(what))") {
            try await f.store.loadReceiverState(for: group, sender: sender)
        }
        guard let state else { throw f.checker.failure("no receiver state is stored \(what)") }
        return state
    }
}
