import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// `removeMembers` is safe to repeat: whichever of its writes the process dies in (the new
/// chain with the members, forgetting each removed member's chains, the distribution's
/// pairwise message), calling it again after the restart completes the removal, and the
/// remaining member reads what is sent next while the removed ones are refused.
final class GroupRemovalCrashTests: XCTestCase {
    func testRemoveMembersInterruptedAtEveryWriteCompletesWhenRepeated() async throws {
        // Writes: 0 the new chain and the members, 1 and 2 the removed members' chains, 3 the
        // pairwise message carrying the distribution to Bob.
        for write in 0 ..< 4 {
            for point in CrashPoint.allCases {
                try await removeMembers(crashingAt: write, point)
            }
        }
    }

    private func removeMembers(crashingAt write: Int, _ point: CrashPoint) async throws {
        let context = "crash at write \(write), \(point)"
        let server = MailServer()
        let alice = try await CrashingApp("alice", seed: 900)
        let bob = try await CrashingApp("bob", seed: 901)
        for app in [alice, bob] { await server.publish(try await app.manager.maintainPreKeys(), for: app.address) }
        let bobBundle = await server.bundle(for: bob.address)
        try await alice.manager.processBundle(try XCTUnwrap(bobBundle), for: bob.address)
        let carolAddress = address("carol", 1), daveAddress = address("dave", 1)
        let carol = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: TestTrustEvaluator(), localAddress: carolAddress)
        let dave = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: TestTrustEvaluator(), localAddress: daveAddress)
        let group = groupID("removal")
        try await alice.manager.setGroupMembers([bob.address, carolAddress, daveAddress], for: group)
        try await bob.manager.setGroupMembers([alice.address, carolAddress, daveAddress], for: group)
        for member in [carol, dave] {
            let distribution = try await member.senderKeyDistributionMessage(for: group).serialized
            try await alice.manager.processSenderKeyDistribution(distribution, for: group, from: member.localAddress)
        }
        let original = try await alice.manager.senderKeyDistributionMessage(for: group)

        alice.planCrash(at: write, point)
        var interrupted = false
        do {
            let outcomes = try await alice.manager.removeMembers([carolAddress, daveAddress], from: group, remaining: [bob.address])
            // The last write is the distribution's: its failure is reported per device.
            if case let .failure(error) = try XCTUnwrap(outcomes.first, context).result {
                XCTAssertEqual(error, DiskStore.crash, context)
                interrupted = true
            }
        } catch let error as SessionError {
            XCTAssertEqual(error, DiskStore.crash, context)
            interrupted = true
        }
        XCTAssertTrue(interrupted, "\(context): the process was meant to die")
        let crashed = await alice.hasCrashed
        XCTAssertTrue(crashed, context)

        // The repeat after the restart completes the removal.
        alice.restart()
        let outcomes = try await alice.manager.removeMembers([carolAddress, daveAddress], from: group, remaining: [bob.address])
        XCTAssertEqual(outcomes.map(\.address), [bob.address], context)
        let message = try XCTUnwrap(try outcomes.first?.result.get(), context)
        try await bob.manager.processSenderKeyDistribution(encrypted: message, for: group, from: alice.address)
        let members = try await alice.manager.groupMembers(of: group)
        XCTAssertEqual(members, [bob.address], context)
        for removed in [carolAddress, daveAddress] {
            let state = try await alice.store.loadReceiverState(for: group, sender: removed)
            XCTAssertNil(state, "\(context): \(removed)'s chains are forgotten")
        }
        let current = try await alice.manager.senderKeyDistributionMessage(for: group)
        XCTAssertNotEqual(current.chainID, original.chainID, "\(context): a new chain")
        let sent = try await alice.manager.groupEncrypt(Array("after the removal".utf8), for: group)
        let read = try await bob.manager.groupDecrypt(sent, for: group, from: alice.address)
        XCTAssertEqual(read, Array("after the removal".utf8), context)
        let fromCarol = try await carol.groupEncrypt(Array("still here?".utf8), for: group)
        do {
            _ = try await alice.manager.groupDecrypt(fromCarol, for: group, from: carolAddress)
            XCTFail("\(context): a removed member was read")
        } catch {
            XCTAssertEqual(error, .notAGroupMember, context)
        }
    }
}
