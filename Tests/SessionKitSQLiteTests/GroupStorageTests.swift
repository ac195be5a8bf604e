import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import Verification
import XCTest

/// Group members, kept group messages and the received-chain index in the SQLite store
/// (schema 4): they survive a reopen, a relabelled message is recognised from the index, and
/// nothing about a member or a message is in clear in the file.
final class GroupStorageTests: XCTestCase {
    private typealias Device = SessionStorageTests.Device
    private let alice = address("alice", 1)
    private let bob = address("bob", 7)

    func testMembersAndAKeptMessageSurviveAReopenAndAreReleasedWithTheDistribution() async throws {
        let folder = try temporaryFolder()
        let bobPath = folder.appendingPathComponent("bob.sqlite").path
        let a = try Device(alice, path: folder.appendingPathComponent("alice.sqlite").path)
        var b = try Device(bob, path: bobPath)
        let group = try GroupID("club-secret-name")
        try await b.manager.setGroupMembers([alice], for: group)
        try await a.manager.setGroupMembers([bob], for: group)
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        let outcomes = try await a.manager.distributeSenderKey(for: group, to: [bob])
        let distribution = try XCTUnwrap(outcomes.first?.envelope)
        let early = try await a.manager.groupEncryptEnvelope(bytes("early words"), for: group)
        await assertThrowsSessionError(.unknownChain) { try await b.manager.receive(early) }

        try b.store.close()
        b = try Device(bob, path: bobPath)
        let members = try await b.manager.groupMembers(of: group)
        XCTAssertEqual(members, [alice])
        let kept = try await b.store.loadPendingGroupMessages(for: group, sender: alice)
        XCTAssertEqual(kept.map(\.message), [early.body])

        guard case let .senderKeyDistribution(_, _, _, released, _) = try await b.manager.receive(distribution) else {
            return XCTFail("a distribution")
        }
        XCTAssertEqual(released.map(\.plaintext), [bytes("early words")])
        let left = try await b.store.loadPendingGroupMessages(for: group, sender: alice)
        XCTAssertEqual(left, [])
        try b.store.close()

        // Neither the group id, the members' ids nor the message is in clear in the file.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: bobPath))
        for secret in ["club-secret-name", "alice", "early words"] {
            XCTAssertNil(bytes.range(of: Data(secret.utf8)), "\(secret) in clear")
        }
    }

    func testARelabelledMessageIsRecognisedFromTheChainIndexAndNotKept() async throws {
        let folder = try temporaryFolder()
        let a = try Device(alice, path: folder.appendingPathComponent("alice.sqlite").path)
        let b = try Device(bob, path: folder.appendingPathComponent("bob.sqlite").path)
        let (alpha, beta) = (try GroupID("alpha"), try GroupID("beta"))
        for group in [alpha, beta] { try await b.manager.setGroupMembers([alice], for: group) }
        try await a.manager.processBundle(try await b.bundle(), for: bob)
        let outcomes = try await a.manager.distributeSenderKey(for: alpha, to: [bob])
        _ = try await b.manager.receive(try XCTUnwrap(outcomes.first?.envelope))
        let state = try await b.store.loadReceiverState(for: alpha, sender: alice)
        let chain = try XCTUnwrap(state?.chainIDs.first)
        let indexed = try await b.store.holdsReceiverChain(chain.rawRepresentation)
        XCTAssertTrue(indexed)

        let message = try await a.manager.groupEncrypt(bytes("for alpha"), for: alpha)
        await assertThrowsSessionError(.invalidMessage) { try await b.manager.groupDecrypt(message, for: beta, from: self.alice) }
        let kept = try await b.store.loadPendingGroupMessages(for: beta, sender: alice)
        XCTAssertEqual(kept, [])
        // Removing the chains removes them from the index.
        try await b.store.removeReceiverState(for: alpha, sender: alice)
        let gone = try await b.store.holdsReceiverChain(chain.rawRepresentation)
        XCTAssertFalse(gone)
    }

    /// A damaged member list is `damagedState(.groupMembers)` for that group only, and setting
    /// the members again replaces it.
    func testADamagedMemberListIsDamagedStateAndSettingTheMembersReplacesIt() async throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("bob.sqlite").path
        let b = try Device(bob, path: path)
        let (group, other) = (try GroupID("damaged"), try GroupID("fine"))
        try await b.manager.setGroupMembers([alice], for: group)
        try await b.manager.setGroupMembers([alice], for: other)
        let rowKey = b.store.sealer.rowKey(group.rawRepresentation, in: .groupMembers)
        try withRawDatabase(path) { db in
            try db.execute(sql: "UPDATE group_members SET sealed = substr(sealed, 1, length(sealed) - 1) WHERE group_hash = ?",
                           arguments: [Data(rowKey)])
        }
        await assertThrowsSessionError(.damagedState(.groupMembers)) { try await b.manager.groupMembers(of: group) }
        let fine = try await b.manager.groupMembers(of: other)
        XCTAssertEqual(fine, [alice])
        try await b.manager.setGroupMembers([alice], for: group)
        let repaired = try await b.manager.groupMembers(of: group)
        XCTAssertEqual(repaired, [alice])
    }

    private func assertThrowsSessionError<T>(
        _ expected: SessionError, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> T
    ) async {
        do {
            _ = try await body()
            XCTFail("expected \(expected)", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? SessionError, expected, file: file, line: line)
        }
    }

    /// A distribution to many members is one commit of many sessions: each is stored (the
    /// file, read again after a reopen, goes on from the advanced sessions).
    func testADistributionToManyMembersStoresEverySessionInTheFile() async throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("alice.sqlite").path
        var a = try Device(alice, path: path)
        let group = try GroupID("many")
        var members: [(ProtocolAddress, SessionManager)] = []
        for index in 0 ..< 40 {
            let member = address("member-\(index)", 1)
            let manager = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: member)
            let upload = try await manager.maintainPreKeys()
            try await a.manager.processBundle(try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first)), for: member)
            try await manager.setGroupMembers([alice], for: group)
            members.append((member, manager))
        }
        try await a.manager.setGroupMembers(members.map(\.0), for: group)
        let outcomes = try await a.manager.distributeSenderKey(for: group, to: members.map(\.0))
        XCTAssertEqual(outcomes.count, members.count)
        for ((member, manager), outcome) in zip(members, outcomes) {
            try await manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(outcome.ciphertext), for: group, from: alice)
            XCTAssertEqual(outcome.address, member)
        }
        try a.store.close()
        a = try Device(alice, path: path)
        for (member, manager) in members {
            let message = try await a.manager.encrypt(bytes("after the reopen"), to: member)
            let read = try await manager.decrypt(message, from: alice)
            XCTAssertEqual(read.plaintext, bytes("after the reopen"))
        }
    }

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Join points (SPEC §9) are written with the members and survive a reopen; a row written
    /// before they were kept (members only) reads with none; a point for a device that is not
    /// a member, or named twice, does not decode.
    func testJoinPointsSurviveAReopenAndAnOlderRowHasNone() async throws {
        let path = try temporaryStorePath()
        let group = try GroupID("joined")
        let carol = address("carol", 2)
        let point = GroupJoinPoint(chainID: [UInt8](repeating: 7, count: 32), iteration: 41)
        var store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        var commit = StoreCommit()
        commit.store(members: [bob, carol], joinPoints: [bob: point, alice: point], for: group)
        try await store.commit(commit)
        try store.close()
        store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey())
        defer { try? store.close() }
        let members = try await store.loadGroupMembers(for: group)
        XCTAssertEqual(members, [bob, carol])
        let points = try await store.loadGroupJoinPoints(for: group)
        XCTAssertEqual(points, [bob: point], "a non-member's point is not written")

        let older = GroupMembersCoding.encode([bob, carol], joinPoints: [:]).dropLast(4)
        let decoded = try GroupMembersCoding.decode(Array(older))
        XCTAssertEqual(decoded.members, [bob, carol])
        XCTAssertEqual(decoded.joinPoints, [:])
        let full = GroupMembersCoding.encode([bob], joinPoints: [bob: point])
        XCTAssertEqual(try GroupMembersCoding.decode(full).joinPoints, [bob: point])
        var twice = Array(full.prefix(full.count - (bob.encoded.count + 40)))
        twice.replaceSubrange(twice.count - 4 ..< twice.count, with: [0, 0, 0, 2])
        twice += Array(full.suffix(bob.encoded.count + 40)) + Array(full.suffix(bob.encoded.count + 40))
        XCTAssertThrowsError(try GroupMembersCoding.decode(twice), "a member named twice")
        let stranger = GroupMembersCoding.encode([bob], joinPoints: [:]).dropLast(4)
            + [0, 0, 0, 1] + carol.encoded + point.chainID + [UInt8](repeating: 0, count: 8)
        XCTAssertThrowsError(try GroupMembersCoding.decode(Array(stranger)), "a point for a non-member")
    }
}
