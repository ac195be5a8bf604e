import SignalPrimitives
import XCTest
@testable import SessionKit

/// A group as each member sees it: one sending chain, one receiver state per member device.
final class GroupSessionTests: XCTestCase {
    private typealias Support = GroupTestSupport

    private let alice = ProtocolAddress(userID: "alice", deviceID: 1)
    private let bob = ProtocolAddress(userID: "bob", deviceID: 1)
    private let carol = ProtocolAddress(userID: "carol", deviceID: 2)

    /// Three members that have exchanged distribution messages.
    private func group() throws -> [ProtocolAddress: GroupSession] {
        let random = SeededRandomSource(seed: 50)
        var sessions: [ProtocolAddress: GroupSession] = [:]
        for member in [alice, bob, carol] { sessions[member] = try GroupSession(using: random) }
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
    }

    func testMessageFromAMemberWeHoldNothingForIsUnknownChain() throws {
        var sessions = try group()
        let message = try XCTUnwrap(sessions[alice]?.encrypt([1]))
        let stranger = ProtocolAddress(userID: "mallory", deviceID: 1)
        XCTAssertThrowsError(try sessions[bob]?.decrypt(message, from: stranger)) {
            XCTAssertEqual($0 as? SessionError, .unknownChain)
        }
        // Attributed to the wrong member, the chain is unknown too.
        XCTAssertThrowsError(try sessions[bob]?.decrypt(message, from: carol)) {
            XCTAssertEqual($0 as? SessionError, .unknownChain)
        }
        // Type and length are still checked first.
        XCTAssertThrowsError(try sessions[bob]?.decrypt([0x12] + message.dropFirst(), from: stranger)) {
            XCTAssertEqual($0 as? SessionError, .unsupportedVersion)
        }
        XCTAssertEqual(try sessions[bob]?.decrypt(message, from: alice), [1])
    }

    func testRemovedMemberCannotReadAfterRotation() throws {
        var sessions = try group()
        sessions[alice]?.removeMember(carol)
        let random = SeededRandomSource(seed: 51)
        let oldChain = try XCTUnwrap(sessions[alice]).sendingChain.chainID
        let distribution = try XCTUnwrap(sessions[alice]?.rotateSendingChain(using: random))
        XCTAssertNotEqual(distribution.chainID, oldChain)
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
        let newcomer = ProtocolAddress(userID: "dave", deviceID: 3)
        XCTAssertThrowsError(try sessions[bob]?.processDistribution([0x10] + [UInt8](repeating: 0, count: 100), from: newcomer)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
        XCTAssertFalse(try XCTUnwrap(sessions[bob]).members.contains(newcomer))
    }
}
