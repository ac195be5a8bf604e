@_spi(Testing) @testable import SessionKit
import SignalPrimitives
import TestSupport
import XCTest

/// `distributeSenderKey(for:to:)`, `encrypt(_:toDevices:)` and the fan-out store every
/// device's advanced session in one store commit, and a device they cannot encrypt to in that
/// commit still gets its own outcome.
final class OneCommitEncryptionTests: XCTestCase {
    func testABurstToManyDevicesIsOneCommitAndEachDeviceReadsItsMessage() async throws {
        let server = FakeServer()
        let hub = try await TestDevice("hub", 1, seed: 4300, server: server)
        var peers: [TestDevice] = []
        for index in 0 ..< 10 { peers.append(try await TestDevice("peer-\(index)", 1, seed: 4301 + UInt64(index), server: server)) }
        for peer in peers.dropFirst() { try await hub.startSession(with: peer.address, server: server) }
        let writes = await hub.store.writeAttempts
        let outcomes = try await hub.manager.encrypt(utf8("burst"), toDevices: peers.map(\.address))
        let commits = await hub.store.writeAttempts - writes
        XCTAssertEqual(commits, 1, "nine sessions in one commit; the device without a session writes nothing")
        XCTAssertEqual(outcomes.map(\.address), peers.map(\.address))
        guard case .failure(.noSession) = outcomes.first?.result else { return XCTFail("the first peer has no session") }
        for (peer, outcome) in zip(peers.dropFirst(), outcomes.dropFirst()) {
            let read = try await peer.manager.decrypt(try XCTUnwrap(outcome.ciphertext), from: hub.address)
            XCTAssertEqual(read.plaintext, utf8("burst"))
        }
        let tooLong = [UInt8](repeating: 0, count: SessionManager.maximumEnvelopePlaintextByteCount + 1)
        do {
            _ = try await hub.manager.encrypt(tooLong, toDevices: [peers[1].address])
            XCTFail("a plaintext over the envelope limit")
        } catch {
            guard case .invalidConfiguration = error else { return XCTFail("invalidConfiguration, not \(error)") }
        }
    }

    func testADistributionToManyMembersIsOneCommitAndEveryMemberReadsIt() async throws {
        let server = FakeServer()
        let team = try GroupID("many-members")
        let alice = try await TestDevice("alice", 1, seed: 4100, server: server)
        var members: [TestDevice] = []
        for index in 0 ..< 12 { members.append(try await TestDevice("member-\(index)", 1, seed: 4101 + UInt64(index), server: server)) }
        try await makeGroup(team, of: [alice] + members)
        // Every member but the last has a session with Alice.
        for member in members.dropLast() { try await alice.startSession(with: member.address, server: server) }
        _ = try await alice.manager.senderKeyDistributionMessage(for: team)

        let writes = await alice.store.writeAttempts
        let addresses = members.map(\.address)
        // A member named twice is encrypted to once.
        let outcomes = try await alice.manager.distributeSenderKey(for: team, to: addresses + [addresses[0]])
        let commits = await alice.store.writeAttempts - writes
        XCTAssertEqual(commits, 1, "one commit for eleven sessions (the member without a session writes nothing)")
        XCTAssertEqual(outcomes.map(\.address), addresses, "one outcome per device, in the order given")
        guard case .failure(.noSession) = outcomes.last?.result else { return XCTFail("the member without a session: noSession") }

        let message = try await alice.manager.groupEncrypt(utf8("to everyone"), for: team)
        for (member, outcome) in zip(members.dropLast(), outcomes) {
            try await member.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(outcome.ciphertext), for: team, from: alice.address)
            let read = try await member.manager.groupDecrypt(message, for: team, from: alice.address)
            XCTAssertEqual(read, utf8("to everyone"))
        }
        // Each session advanced once: the next pairwise message is the second of its chain.
        let next = try await alice.manager.encrypt(utf8("after"), to: members[0].address)
        let decrypted = try await members[0].manager.decrypt(next, from: alice.address)
        XCTAssertEqual(decrypted.plaintext, utf8("after"))
    }

    /// The size: a distribution to 1,000 members is one commit.
    func testADistributionToAThousandMembersIsOneCommit() async throws {
        let server = FakeServer()
        let team = try GroupID("a-thousand")
        let alice = try await TestDevice("alice", 1, seed: 4400, server: server)
        let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 1, oneTimePreKeyLowWaterMark: 0)
        var members: [TestDevice] = []
        for index in 0 ..< 1000 {
            let member = try await TestDevice("member-\(index)", 1, seed: 4401 + UInt64(index), server: server, policy: policy)
            try await alice.startSession(with: member.address, server: server)
            members.append(member)
        }
        try await alice.manager.setGroupMembers(members.map(\.address), for: team)
        _ = try await alice.manager.senderKeyDistributionMessage(for: team)
        let writes = await alice.store.writeAttempts
        let outcomes = try await alice.manager.distributeSenderKey(for: team, to: members.map(\.address))
        let commits = await alice.store.writeAttempts - writes
        XCTAssertEqual(commits, 1)
        XCTAssertEqual(outcomes.compactMap(\.ciphertext).count, 1000)
        for index in [0, 499, 999] {
            try await members[index].manager.setGroupMembers([alice.address], for: team)
            try await members[index].manager.processSenderKeyDistribution(
                encrypted: try XCTUnwrap(outcomes[index].ciphertext), for: team, from: alice.address)
        }
    }

    func testARefusedCommitFallsBackToOneCommitPerMemberAndReportsEachFailure() async throws {
        let server = FakeServer()
        let team = try GroupID("refused")
        let alice = try await TestDevice("alice", 1, seed: 4200, server: server)
        let bob = try await TestDevice("bob", 1, seed: 4201, server: server)
        let carol = try await TestDevice("carol", 1, seed: 4202, server: server)
        try await makeGroup(team, of: [alice, bob, carol])
        for member in [bob, carol] { try await alice.startSession(with: member.address, server: server) }
        _ = try await alice.manager.senderKeyDistributionMessage(for: team)
        let before = await alice.snapshot(groups: [team], senders: [])
        await alice.store.setFailWrites(true)
        let writes = await alice.store.writeAttempts
        let outcomes = try await alice.manager.distributeSenderKey(for: team, to: [bob.address, carol.address])
        let attempts = await alice.store.writeAttempts - writes
        XCTAssertEqual(attempts, 3, "the batch, then each member alone")
        for outcome in outcomes {
            guard case .failure(.storage) = outcome.result else { return XCTFail("\(outcome.address): a storage failure") }
        }
        let after = await alice.snapshot(groups: [team], senders: [])
        XCTAssertEqual(after, before, "nothing stored")

        await alice.store.setFailWrites(false)
        let retried = try await alice.manager.distributeSenderKey(for: team, to: [bob.address, carol.address])
        for (member, outcome) in zip([bob, carol], retried) {
            try await member.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(outcome.ciphertext), for: team, from: alice.address)
        }
    }
}
