import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// SPEC §5 version 2 through `SessionManager`: chains that belong to a group and a sender,
/// member removal, messages sent before a member had the chain, and sending to one's own
/// other devices.
final class GroupManagerTests: XCTestCase {
    func testRemoveMembersStartsANewChainThatTheRemovedMemberCannotDecryptWhileTheOthersCan() async throws {
        let server = FakeServer()
        let team = groupID("team")
        let alice = try await TestDevice("alice", 1, seed: 3001, server: server)
        let bob = try await TestDevice("bob", 1, seed: 3002, server: server)
        let carol = try await TestDevice("carol", 1, seed: 3003, server: server)
        try await makeGroup(team, of: [alice, bob, carol])
        for member in [bob, carol] { try await alice.startSession(with: member.address, server: server) }
        try await carol.startSession(with: alice.address, server: server)
        for (member, outcome) in zip([bob, carol], try await alice.manager.distributeSenderKey(for: team, to: [bob.address, carol.address])) {
            try await member.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(outcome.ciphertext), for: team, from: alice.address)
        }
        let fromCarol = try await carol.manager.distributeSenderKey(for: team, to: [alice.address])
        try await alice.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(fromCarol.first?.ciphertext), for: team, from: carol.address)
        let carolsFirst = try await carol.manager.groupEncrypt(utf8("carol here"), for: team)
        let atAlice = try await alice.manager.groupDecrypt(carolsFirst, for: team, from: carol.address)
        XCTAssertEqual(atAlice, utf8("carol here"))

        let before = try await alice.manager.groupEncrypt(utf8("before"), for: team)
        let lateBefore = try await alice.manager.groupEncrypt(utf8("sent before, delivered after"), for: team)
        for member in [bob, carol] {
            let received = try await member.manager.groupDecrypt(before, for: team, from: alice.address)
            XCTAssertEqual(received, utf8("before"))
        }

        // Carol leaves; the caller lists her among the remaining by mistake: she is left out.
        let outcomes = try await alice.manager.removeMembers([carol.address], from: team, remaining: [bob.address, carol.address])
        XCTAssertEqual(outcomes.map(\.address), [bob.address])
        try await bob.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(outcomes.first?.ciphertext), for: team, from: alice.address)
        let after = try await alice.manager.groupEncrypt(utf8("after"), for: team)
        XCTAssertNotEqual(try SenderKeyMessage(serialized: after).chainID, try SenderKeyMessage(serialized: before).chainID, "a new chain")
        let atBob = try await bob.manager.groupDecrypt(after, for: team, from: alice.address)
        XCTAssertEqual(atBob, utf8("after"))
        let carolBefore = await carol.snapshot(groups: [team], senders: [alice.address])
        await assertThrowsAsync(.unknownChain) { try await carol.manager.groupDecrypt(after, for: team, from: alice.address) }
        let carolAfter = await carol.snapshot(groups: [team], senders: [alice.address])
        XCTAssertEqual(carolAfter, carolBefore)
        // Bob still reads what was sent on the old chain before the removal.
        let late = try await bob.manager.groupDecrypt(lateBefore, for: team, from: alice.address)
        XCTAssertEqual(late, utf8("sent before, delivered after"))
        // Alice forgot Carol's chain, and Carol is no member any more.
        let carolsSecond = try await carol.manager.groupEncrypt(utf8("still talking"), for: team)
        await assertThrowsAsync(.notAGroupMember) { try await alice.manager.groupDecrypt(carolsSecond, for: team, from: carol.address) }
        let members = try await alice.manager.groupMembers(of: team)
        XCTAssertEqual(members, [bob.address])
    }

    func testAGroupMessageSentBeforeAMemberGotTheChainIsMessageKeyUnavailable() async throws {
        let server = FakeServer()
        let team = groupID("team")
        let alice = try await TestDevice("alice", 1, seed: 3010, server: server)
        let dave = try await TestDevice("dave", 1, seed: 3011, server: server)
        try await makeGroup(team, of: [alice, dave])
        try await alice.startSession(with: dave.address, server: server)
        let initial = try await alice.manager.senderKeyDistributionMessage(for: team)
        XCTAssertEqual(initial.iteration, 0)
        let early = [try await alice.manager.groupEncrypt(utf8("early 0"), for: team),
                     try await alice.manager.groupEncrypt(utf8("early 1"), for: team)]
        // Dave joins now: he is given the chain at iteration 2.
        let outcomes = try await alice.manager.distributeSenderKey(for: team, to: [dave.address])
        try await dave.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(outcomes.first?.ciphertext), for: team, from: alice.address)
        let later = try await alice.manager.groupEncrypt(utf8("later"), for: team)
        XCTAssertEqual(try SenderKeyMessage(serialized: later).iteration, 2)
        let before = await dave.snapshot(groups: [team], senders: [alice.address])
        for message in early {
            await assertThrowsAsync(.messageKeyUnavailable) { try await dave.manager.groupDecrypt(message, for: team, from: alice.address) }
        }
        let after = await dave.snapshot(groups: [team], senders: [alice.address])
        XCTAssertEqual(after, before)
        let received = try await dave.manager.groupDecrypt(later, for: team, from: alice.address)
        XCTAssertEqual(received, utf8("later"))
        // Not a duplicate: a real duplicate is reported differently, and the early ones stay unavailable.
        await assertThrowsAsync(.duplicateMessage) { try await dave.manager.groupDecrypt(later, for: team, from: alice.address) }
        await assertThrowsAsync(.messageKeyUnavailable) { try await dave.manager.groupDecrypt(early[0], for: team, from: alice.address) }
    }

    func testADistributionForAnotherGroupIsRefusedAndTheSameBytesWorkForTheirOwnGroup() async throws {
        let server = FakeServer()
        let (alpha, beta) = (groupID("alpha"), groupID("beta"))
        let alice = try await TestDevice("alice", 1, seed: 3020, server: server)
        let bob = try await TestDevice("bob", 1, seed: 3021, server: server)
        try await makeGroup(alpha, of: [alice, bob])
        try await makeGroup(beta, of: [alice, bob])
        try await alice.startSession(with: bob.address, server: server)
        let outcomes = try await alice.manager.distributeSenderKey(for: alpha, to: [bob.address])
        let pairwise = try XCTUnwrap(outcomes.first?.ciphertext)
        let before = await bob.snapshot(groups: [alpha, beta], senders: [alice.address])
        await assertThrowsAsync(.invalidMessage) {
            try await bob.manager.processSenderKeyDistribution(encrypted: pairwise, for: beta, from: alice.address)
        }
        let after = await bob.snapshot(groups: [alpha, beta], senders: [alice.address])
        XCTAssertEqual(after, before, "no chain stored and the pairwise session not advanced")
        let observation = try await bob.manager.processSenderKeyDistribution(encrypted: pairwise, for: alpha, from: alice.address)
        XCTAssertNotEqual(observation, .changed(previous: alice.identity.publicKey))
        XCTAssertTrue([IdentityObservation.firstUse, .unchanged].contains(observation))
        let message = try await alice.manager.groupEncrypt(utf8("alpha only"), for: alpha)
        let received = try await bob.manager.groupDecrypt(message, for: alpha, from: alice.address)
        XCTAssertEqual(received, utf8("alpha only"))
        // Relabelled to beta (where Alice is a member too): a chain Bob holds for alpha, dropped.
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.groupDecrypt(message, for: beta, from: alice.address) }
        let parked = try await bob.store.loadPendingGroupMessages(for: beta, sender: alice.address)
        XCTAssertEqual(parked, [], "a relabelled message is not kept as pending")
        // The plaintext form is checked the same way.
        let plain = try await alice.manager.senderKeyDistributionMessage(for: alpha).serialized
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.processSenderKeyDistribution(plain, for: beta, from: alice.address) }
    }

    func testARelabeledOrReattributedGroupMessageFailsAndChangesNothing() async throws {
        let server = FakeServer()
        let (alpha, beta) = (groupID("alpha"), groupID("beta"))
        let alice = try await TestDevice("alice", 1, seed: 3030, server: server)
        let bob = try await TestDevice("bob", 1, seed: 3031, server: server)
        let carol = address("carol", 1)
        for group in [alpha, beta, groupID("gamma")] { try await bob.manager.setGroupMembers([alice.address, carol], for: group) }
        let distribution = try await alice.manager.senderKeyDistributionMessage(for: alpha).serialized
        try await bob.manager.processSenderKeyDistribution(distribution, for: alpha, from: alice.address)
        // A member relabels Alice's chain as beta's, and Carol passes it off as her own: both
        // distributions are well formed for what they claim, so Bob stores them.
        var relabeled = distribution
        relabeled.replaceSubrange(1 ..< 7, with: GroupTestSupport.encodeGroup("beta"))
        try await bob.manager.processSenderKeyDistribution(relabeled, for: beta, from: alice.address)
        try await bob.manager.processSenderKeyDistribution(distribution, for: alpha, from: carol)

        let message = try await alice.manager.groupEncrypt(utf8("for alpha, from alice"), for: alpha)
        let before = await bob.snapshot(groups: [alpha, beta], senders: [alice.address, carol])
        await assertThrowsAsync(.invalidSignature) { try await bob.manager.groupDecrypt(message, for: beta, from: alice.address) }
        await assertThrowsAsync(.invalidSignature) { try await bob.manager.groupDecrypt(message, for: alpha, from: carol) }
        // Relabelled to a group with no chain from Alice: its chain is held for alpha, so it is
        // dropped, not kept waiting for a distribution that never comes.
        await assertThrowsAsync(.invalidMessage) { try await bob.manager.groupDecrypt(message, for: groupID("gamma"), from: alice.address) }
        let parked = try await bob.store.loadPendingGroupMessages(for: groupID("gamma"), sender: alice.address)
        XCTAssertEqual(parked, [])
        let after = await bob.snapshot(groups: [alpha, beta], senders: [alice.address, carol])
        XCTAssertEqual(after, before)
        let received = try await bob.manager.groupDecrypt(message, for: alpha, from: alice.address)
        XCTAssertEqual(received, utf8("for alpha, from alice"))
    }

    /// SPEC §6: live copies of what a user sends go to the user's other devices through their
    /// sessions; the sending device itself is never a recipient.
    func testEncryptingToAUserIncludingOwnDevicesReachesTheSendersOtherDevicesButNotItself() async throws {
        let server = FakeServer()
        let alice1 = try await TestDevice("alice", 1, seed: 3040, server: server)
        let alice2 = try await TestDevice("alice", 2, seed: 3041, server: server, identity: alice1.identity)
        let alice3 = try await TestDevice("alice", 3, seed: 3042, server: server, identity: alice1.identity)
        let bob = try await TestDevice("bob", 1, seed: 3043, server: server)
        for peer in [bob, alice3, alice2] { try await alice1.startSession(with: peer.address, server: server) }

        let plain = try await alice1.manager.encrypt(utf8("to bob"), toUser: "bob")
        XCTAssertEqual(plain.map(\.address), [bob.address])
        let withOwn = try await alice1.manager.encrypt(utf8("to bob, copies to me"), toUser: "bob", includingOwnDevices: true)
        XCTAssertEqual(withOwn.map(\.address), [bob.address, alice2.address, alice3.address], "the recipient first, then own devices ascending")
        for (device, outcome) in zip([bob, alice2, alice3], withOwn) {
            let ciphertext = try XCTUnwrap(outcome.ciphertext)
            if device.address == bob.address {
                _ = try await device.manager.decrypt(try XCTUnwrap(plain.first?.ciphertext), from: alice1.address)
            }
            let received = try await device.manager.decrypt(ciphertext, from: alice1.address)
            XCTAssertEqual(received.plaintext, utf8("to bob, copies to me"))
        }
        // To one's own user: the other devices only.
        let ownUser = try await alice1.manager.encrypt(utf8("note to self"), toUser: "alice", includingOwnDevices: true)
        XCTAssertEqual(ownUser.map(\.address), [alice2.address, alice3.address])

        // Even a record stored under the device's own address (say, restored from a backup of
        // another device) is never encrypted to.
        let loaded = await alice1.base.loadSession(for: alice2.address)
        var foreign = try XCTUnwrap(loaded)
        foreign.generation = 0    // a new record for the device's own address
        var commit = StoreCommit()
        commit.store(foreign, for: alice1.address)
        try await alice1.base.commit(commit)
        let again = try await alice1.manager.encrypt(utf8("again"), toUser: "bob", includingOwnDevices: true)
        XCTAssertEqual(again.map(\.address), [bob.address, alice2.address, alice3.address])
        let ownAgain = try await alice1.manager.encrypt(utf8("again"), toUser: "alice", includingOwnDevices: true)
        XCTAssertEqual(ownAgain.map(\.address), [alice2.address, alice3.address])
    }

    /// A malformed user id (empty, or over 255 UTF-8 bytes) is an error, as documented, and not
    /// an empty list of outcomes (which an app would take for "nobody to send to").
    func testEncryptingToAMalformedUserIDThrowsInvalidAddress() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 3045, server: server)
        for userID in ["", String(repeating: "u", count: 256)] {
            for includingOwnDevices in [false, true] {
                await assertThrowsAsync(.invalidAddress) {
                    try await alice.manager.encrypt(utf8("to nobody"), toUser: userID, includingOwnDevices: includingOwnDevices)
                }
            }
        }
        let valid = try await alice.manager.encrypt(utf8("to nobody"), toUser: String(repeating: "u", count: 255))
        XCTAssertTrue(valid.isEmpty, "a well-formed id without sessions: no outcome, no error")
    }

    /// `SessionRecord.Decryption.wipePlaintext()`, which `processSenderKeyDistribution(encrypted:)`
    /// runs on the decrypted distribution (it holds the chain key) on every path: it zeroes the
    /// plaintext in place. (The manager's own copy is not observable from outside.)
    func testWipingADecryptionZeroesItsPlaintext() throws {
        var conversation = try Conversation(seed: 3050)
        let message = try conversation.aliceSends(utf8("a chain key, say"))
        var decryption = try conversation.bobRecord.decrypt(
            message, identity: conversation.bobIdentity, localAddress: conversation.bobAddress,
            remoteAddress: conversation.aliceAddress, preKeys: conversation.bobPreKeys, random: conversation.bobRandom)
        XCTAssertEqual(decryption.plaintext, utf8("a chain key, say"))
        decryption.wipePlaintext()
        XCTAssertEqual(decryption.plaintext, [UInt8](repeating: 0, count: 16))
        XCTAssertFalse("\(decryption)".contains("chain key"), "the description never shows the plaintext")
    }
}
