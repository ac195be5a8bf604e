import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// A group as each member sees it: one sending chain, one receiver state per member device.
final class GroupSessionTests: XCTestCase {
    private typealias Support = GroupTestSupport

    private let alice = address("alice", 1)
    private let bob = address("bob", 1)
    private let carol = address("carol", 2)
    private let club = groupID("club")

    /// Three members that have exchanged distribution messages.
    private func group() throws -> [ProtocolAddress: GroupSession] {
        let random = SeededRandomSource(seed: 50)
        var sessions: [ProtocolAddress: GroupSession] = [:]
        for member in [alice, bob, carol] { sessions[member] = try GroupSession(group: club, localAddress: member, using: random) }
        for sender in [alice, bob, carol] {
            let distribution = try XCTUnwrap(sessions[sender]).distributionMessage().serialized
            for receiver in [alice, bob, carol] where receiver != sender {
                try sessions[receiver]?.processDistribution(distribution, from: sender)
            }
        }
        return sessions
    }

    func testOneEncryptionIsReadByEveryMember() throws {
        var sessions = try group()
        let message = try XCTUnwrap(sessions[alice]?.encrypt(Array("hello group".utf8)))
        XCTAssertEqual(try sessions[bob]?.decrypt(message, from: alice), Array("hello group".utf8))
        XCTAssertEqual(try sessions[carol]?.decrypt(message, from: alice), Array("hello group".utf8))
        XCTAssertEqual(Set(try XCTUnwrap(sessions[bob]).members), [alice, carol])
        XCTAssertEqual(try XCTUnwrap(sessions[alice]).group, club)
        XCTAssertEqual(try XCTUnwrap(sessions[alice]).sendingChain.sender, alice)
    }

    func testMessageFromAMemberWeHoldNothingForIsUnknownChain() throws {
        var sessions = try group()
        let message = try XCTUnwrap(sessions[alice]?.encrypt([1]))
        let stranger = address("mallory", 1)
        XCTAssertThrowsError(try sessions[bob]?.decrypt(message, from: stranger)) {
            XCTAssertEqual($0 as? SessionError, .unknownChain)
        }
        // Attributed to the wrong member, the chain is unknown too.
        XCTAssertThrowsError(try sessions[bob]?.decrypt(message, from: carol)) {
            XCTAssertEqual($0 as? SessionError, .unknownChain)
        }
        // Type and length are still checked first.
        XCTAssertThrowsError(try sessions[bob]?.decrypt([0x11] + message.dropFirst(), from: stranger)) {
            XCTAssertEqual($0 as? SessionError, .unsupportedVersion)
        }
        XCTAssertThrowsError(try sessions[bob]?.decrypt(Array(message.prefix(148)), from: stranger)) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage)
        }
        XCTAssertEqual(try sessions[bob]?.decrypt(message, from: alice), [1])
    }

    /// Carol passes Alice's chain off as her own (she received it, so she can hand its
    /// distribution to Bob as if it were hers): Alice's messages then do not verify as Carol's.
    func testAChainPassedOffAsAnotherMembersDoesNotOpenTheRealSendersMessages() throws {
        var sessions = try group()
        let random = SeededRandomSource(seed: 52)
        var dave = try GroupSession(group: club, localAddress: address("dave", 1), using: random)
        let aliceDistribution = try XCTUnwrap(sessions[alice]).distributionMessage().serialized
        try dave.processDistribution(aliceDistribution, from: carol)       // relayed by Carol as hers
        let message = try XCTUnwrap(sessions[alice]?.encrypt([7]))
        XCTAssertThrowsError(try dave.decrypt(message, from: carol)) { XCTAssertEqual($0 as? SessionError, .invalidSignature) }
    }

    func testADistributionOrAMessageOfAnotherGroupIsRefused() throws {
        var sessions = try group()
        let random = SeededRandomSource(seed: 53)
        var other = try GroupSession(group: groupID("other club"), localAddress: alice, using: random)
        let before = try XCTUnwrap(sessions[bob]).receiverStates[alice]?.serialized()
        XCTAssertThrowsError(try sessions[bob]?.processDistribution(try other.distributionMessage().serialized, from: alice)) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage)
        }
        XCTAssertEqual(try XCTUnwrap(sessions[bob]).receiverStates[alice]?.serialized(), before, "nothing changed")
        // Bob in the other group holding the club chain under Alice (it came relabeled in a
        // distribution of the other group's id): the club's messages do not verify there.
        var bobElsewhere = GroupSession(sendingChain: try SenderKeySendingChain(group: groupID("other club"), sender: bob, using: random))
        let clubChain = try XCTUnwrap(sessions[alice]).sendingChain
        var relabeled = try clubChain.distributionMessage().serialized
        let clubEncoded = Support.encodeGroup("club"), otherEncoded = Support.encodeGroup("other club")
        XCTAssertEqual(Array(relabeled[1 ..< 1 + clubEncoded.count]), clubEncoded)
        relabeled.replaceSubrange(1 ..< 1 + clubEncoded.count, with: otherEncoded)
        try bobElsewhere.processDistribution(relabeled, from: alice)
        let message = try XCTUnwrap(sessions[alice]?.encrypt([9]))
        XCTAssertThrowsError(try bobElsewhere.decrypt(message, from: alice)) { XCTAssertEqual($0 as? SessionError, .invalidSignature) }
        XCTAssertEqual(try sessions[bob]?.decrypt(message, from: alice), [9])
        _ = try other.encrypt([1])
    }

    func testRemovedMemberCannotReadAfterRotation() throws {
        var sessions = try group()
        sessions[alice]?.removeMember(carol)
        let random = SeededRandomSource(seed: 51)
        let oldChain = try XCTUnwrap(sessions[alice]).sendingChain.chainID
        let distribution = try XCTUnwrap(sessions[alice]?.rotateSendingChain(using: random))
        XCTAssertNotEqual(distribution.chainID, oldChain)
        XCTAssertEqual(distribution.group, club)
        XCTAssertEqual(try XCTUnwrap(sessions[alice]).sendingChain.sender, alice, "the new chain keeps our address")
        try sessions[bob]?.processDistribution(distribution.serialized, from: alice)
        let message = try XCTUnwrap(sessions[alice]?.encrypt([42]))
        XCTAssertEqual(try sessions[bob]?.decrypt(message, from: alice), [42])
        XCTAssertThrowsError(try sessions[carol]?.decrypt(message, from: alice)) {
            XCTAssertEqual($0 as? SessionError, .unknownChain)
        }
        XCTAssertEqual(try XCTUnwrap(sessions[alice]).members, [bob])
    }

    func testFailedDistributionChangesNothing() throws {
        var sessions = try group()
        let newcomer = address("dave", 3)
        // 0x23 || Encode("club") || chain_id || iteration || chain key || a signing key of small order (y = 0).
        let bad = [0x23] + Support.encodeGroup("club") + [UInt8](repeating: 0, count: 32 + 4 + 32 + 32)
        XCTAssertThrowsError(try sessions[bob]?.processDistribution(bad, from: newcomer)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
        XCTAssertFalse(try XCTUnwrap(sessions[bob]).members.contains(newcomer))
    }
}
