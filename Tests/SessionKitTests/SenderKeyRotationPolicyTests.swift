import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Sender-key chains are replaced after `SenderKeyPolicy`'s message count or age, besides when
/// a member leaves: `groupEncrypt` sends nothing on a chain that is due, and
/// `rotateSenderKeyIfDue(for:)` replaces and distributes it.
final class SenderKeyRotationPolicyTests: XCTestCase {
    private let alice = address("alice", 1)
    private let bob = address("bob", 1)

    private struct Pair {
        let alice: SessionManager
        let bob: SessionManager
        let clock: FakeClock
        let group: GroupID
    }

    /// Alice and Bob with a pairwise session, both members of a group in which Bob holds
    /// Alice's chain.
    private func pair(policy: SenderKeyPolicy) async throws -> Pair {
        let clock = FakeClock()
        let a = SessionManager(
            store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: TestTrustEvaluator(), localAddress: alice,
            senderKeyPolicy: policy, clock: clock)
        let b = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: TestTrustEvaluator(), localAddress: bob)
        var published = try PublishedPreKeys(registering: try await b.maintainPreKeys())
        try await a.processBundle(published.takeBundle(), for: bob)
        let group = groupID("rotation")
        try await a.setGroupMembers([bob], for: group)
        try await b.setGroupMembers([alice], for: group)
        for outcome in try await a.distributeSenderKey(for: group, to: [bob]) {
            try await b.processSenderKeyDistribution(encrypted: try outcome.result.get(), for: group, from: alice)
        }
        return Pair(alice: a, bob: b, clock: clock, group: group)
    }

    /// The error `groupEncrypt` throws for Alice, or `nil` when it sends.
    private func groupEncryptError(_ p: Pair, _ plaintext: [UInt8]) async -> SessionError? {
        do {
            _ = try await p.alice.groupEncrypt(plaintext, for: p.group)
            return nil
        } catch {
            return error
        }
    }

    func testTheDefaultsAreAThousandMessagesOrSevenDays() throws {
        XCTAssertEqual(SenderKeyPolicy.default.maximumMessages, 1_000)
        XCTAssertEqual(SenderKeyPolicy.default.maximumAge, 7 * 24 * 3600)
        XCTAssertThrowsError(try SenderKeyPolicy(maximumMessages: 0))
        XCTAssertThrowsError(try SenderKeyPolicy(maximumAge: 0))
    }

    func testAChainIsReplacedAfterItsMessageCount() async throws {
        let p = try await pair(policy: try SenderKeyPolicy(maximumMessages: 3))
        let first = try await p.alice.senderKeyDistributionMessage(for: p.group)
        for index in 0 ..< 3 {
            let nothingDue = try await p.alice.rotateSenderKeyIfDue(for: p.group)
            XCTAssertTrue(nothingDue.isEmpty, "message \(index): not due")
            let sent = try await p.alice.groupEncrypt([UInt8(index)], for: p.group)
            let read = try await p.bob.groupDecrypt(sent, for: p.group, from: alice)
            XCTAssertEqual(read, [UInt8(index)])
        }
        let fourth = await groupEncryptError(p, [9])
        XCTAssertEqual(fourth, .chainExhausted, "the fourth message waits for a new chain")
        let outcomes = try await p.alice.rotateSenderKeyIfDue(for: p.group)
        XCTAssertEqual(outcomes.map(\.address), [bob], "the new chain goes to the stored members")
        try await p.bob.processSenderKeyDistribution(encrypted: try outcomes[0].result.get(), for: p.group, from: alice)
        let second = try await p.alice.senderKeyDistributionMessage(for: p.group)
        XCTAssertNotEqual(second.chainID, first.chainID)
        let sent = try await p.alice.groupEncrypt([4], for: p.group)
        let read = try await p.bob.groupDecrypt(sent, for: p.group, from: alice)
        XCTAssertEqual(read, [4])
    }

    func testAChainIsReplacedAfterItsAge() async throws {
        let p = try await pair(policy: .default)
        let first = try await p.alice.senderKeyDistributionMessage(for: p.group)
        p.clock.advance(bySeconds: SenderKeyPolicy.defaultMaximumAge - 1)
        let early = try await p.alice.rotateSenderKeyIfDue(for: p.group)
        XCTAssertTrue(early.isEmpty, "a second before the age limit")
        _ = try await p.alice.groupEncrypt([1], for: p.group)
        p.clock.advance(bySeconds: 1)
        let aged = await groupEncryptError(p, [2])
        XCTAssertEqual(aged, .chainExhausted)
        let outcomes = try await p.alice.rotateSenderKeyIfDue(for: p.group)
        XCTAssertEqual(outcomes.count, 1)
        try await p.bob.processSenderKeyDistribution(encrypted: try outcomes[0].result.get(), for: p.group, from: alice)
        let second = try await p.alice.senderKeyDistributionMessage(for: p.group)
        XCTAssertNotEqual(second.chainID, first.chainID)
        let sent = try await p.alice.groupEncrypt([3], for: p.group)
        let read = try await p.bob.groupDecrypt(sent, for: p.group, from: alice)
        XCTAssertEqual(read, [3])
    }

    func testTheCreationTimeIsPersistedAndAVersion2ChainHasNone() throws {
        let chain = try SenderKeySendingChain(group: groupID("g"), sender: alice, createdAt: Timestamp(secondsSince1970: 1_234))
        let loaded = try SenderKeySendingChain(serialized: chain.serialized())
        XCTAssertEqual(loaded.createdAt, Timestamp(secondsSince1970: 1_234))
        XCTAssertEqual(loaded.chainID, chain.chainID)
        let untimed = try SenderKeySendingChain(serialized: try SenderKeySendingChain(group: groupID("g"), sender: alice).serialized())
        XCTAssertNil(untimed.createdAt)

        // A version-2 blob (no time): loads without an age, so only its count applies.
        var writer = StateWriter(kind: .senderKeySender, version: 2)
        writer.writeFixed(GroupTestSupport.encodeGroup("g"))
        writer.writeFixed(encodeAddress("a", 1))
        writer.writeFixed([UInt8](repeating: 1, count: 32))
        writer.write(UInt64(999))
        writer.writeFixed([UInt8](repeating: 2, count: 32))
        writer.writeFixed([UInt8](repeating: 3, count: 32))
        let old = try SenderKeySendingChain(serialized: writer.finish())
        XCTAssertNil(old.createdAt)
        let farFuture = Timestamp(secondsSince1970: .max)
        XCTAssertFalse(SenderKeyPolicy.default.isRotationDue(old, now: farFuture), "no age")
        XCTAssertTrue(try SenderKeyPolicy(maximumMessages: 999).isRotationDue(old, now: farFuture), "its count")

        // A creation flag other than 0 or 1 is refused.
        var bad = chain.serialized()
        XCTAssertFalse(bad.isEmpty)
        var flagged = StateWriter(kind: .senderKeySender, version: 3)
        flagged.writeFixed(GroupTestSupport.encodeGroup("g"))
        flagged.writeFixed(encodeAddress("a", 1))
        flagged.writeFixed([UInt8](repeating: 1, count: 32))
        flagged.write(UInt64(0))
        flagged.writeFixed([UInt8](repeating: 2, count: 32))
        flagged.writeFixed([UInt8](repeating: 3, count: 32))
        flagged.write(UInt8(2))
        bad = flagged.finish()
        XCTAssertThrowsError(try SenderKeySendingChain(serialized: bad)) { XCTAssertEqual($0 as? SessionError, .invalidPayload) }
    }
}
