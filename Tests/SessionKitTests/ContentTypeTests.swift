import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// SPEC §2 content types (issue 17): the first padded byte is 0x01 for application content and
/// 0x02 for a sender-key distribution sent inside a pairwise session; each is unpadded only
/// where it is expected, so a relabelled envelope is `invalidPadding` and changes nothing.
final class ContentTypeTests: XCTestCase {
    // MARK: Padding

    func testContentTypeTwoRoundTripsAndDiffersFromApplicationOnlyInTheFirstByte() throws {
        for n in [0, 1, 59, 60, 118, 1019, 1020, 70000] {
            let plaintext = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
            let distribution = try MessagePadding.pad(plaintext, contentType: .senderKeyDistribution)
            let application = try MessagePadding.pad(plaintext)
            XCTAssertEqual(distribution.first, 0x02)
            XCTAssertEqual(application.first, 0x01)
            XCTAssertEqual(Array(distribution.dropFirst()), Array(application.dropFirst()), "length \(n)")
            XCTAssertEqual(try MessagePadding.unpad(distribution, contentType: .senderKeyDistribution), plaintext)
            XCTAssertEqual(try MessagePadding.unpad(application, contentType: .application), plaintext)
        }
        XCTAssertEqual(MessagePadding.ContentType.allCases.map(\.rawValue), [0x01, 0x02])
    }

    func testUnpaddingAsTheOtherContentTypeIsInvalidPadding() throws {
        let plaintext = utf8("a chain key, or chat text")
        let distribution = try MessagePadding.pad(plaintext, contentType: .senderKeyDistribution)
        let application = try MessagePadding.pad(plaintext, contentType: .application)
        XCTAssertThrowsError(try MessagePadding.unpad(distribution)) { XCTAssertEqual($0 as? SessionError, .invalidPadding) }
        XCTAssertThrowsError(try MessagePadding.unpad(distribution, contentType: .application)) {
            XCTAssertEqual($0 as? SessionError, .invalidPadding)
        }
        XCTAssertThrowsError(try MessagePadding.unpad(application, contentType: .senderKeyDistribution)) {
            XCTAssertEqual($0 as? SessionError, .invalidPadding)
        }
        let ranges = distribution.withUnsafeBytes { buffer in
            (application: Result { () throws(SessionError) in try MessagePadding.plaintextRange(in: buffer) },
             distribution: Result { () throws(SessionError) in try MessagePadding.plaintextRange(in: buffer, contentType: .senderKeyDistribution) })
        }
        XCTAssertEqual(ranges.application, .failure(.invalidPadding))
        XCTAssertEqual(ranges.distribution, .success(1 ..< 1 + plaintext.count))
    }

    func testReservedContentTypesAreInvalidPaddingWhateverTypeIsExpected() throws {
        let application = try MessagePadding.pad(utf8("hello"))
        for type in UInt8.min ... UInt8.max where type != 0x01 && type != 0x02 {
            XCTAssertNil(MessagePadding.ContentType(rawValue: type))
            let reserved = [type] + application.dropFirst()
            for expected in MessagePadding.ContentType.allCases {
                XCTAssertThrowsError(try MessagePadding.unpad(reserved, contentType: expected), "0x\(String(type, radix: 16))") {
                    XCTAssertEqual($0 as? SessionError, .invalidPadding)
                }
            }
        }
        // The other rules of SPEC §2 apply to type 2 as well.
        for bad: [UInt8] in [[], [2, 0, 0, 0], [2, 0, 0, 0, 1], [2, 0xff, 0xff, 0xff, 0xff]] {
            XCTAssertThrowsError(try MessagePadding.unpad(bad, contentType: .senderKeyDistribution)) {
                XCTAssertEqual($0 as? SessionError, .invalidPadding)
            }
        }
    }

    // MARK: Sessions

    func testAMessageOfTheOtherContentTypeChangesNoSessionAndDecryptsAsItsOwnType() throws {
        var conversation = try Conversation(seed: 1701)
        // A prekey message carrying a distribution: X3DH authenticates it, the type does not match.
        let first = try conversation.aliceRecord.encrypt(plaintext(1), contentType: .senderKeyDistribution)
        assertFails(.invalidPadding, &conversation) { _ = try $0.bobReceives(first) }
        XCTAssertEqual(try conversation.bobReceives(first, contentType: .senderKeyDistribution), plaintext(1))
        // A reply (a DH step at Alice) that is application content.
        let reply = try conversation.bobSends(plaintext(2))
        assertFails(.invalidPadding, &conversation) { _ = try $0.aliceReceives(reply, contentType: .senderKeyDistribution) }
        XCTAssertEqual(try conversation.aliceReceives(reply), plaintext(2))
        // Out of order on one chain: a failed later message stores no skipped key.
        let distribution = try conversation.aliceRecord.encrypt(plaintext(3), contentType: .senderKeyDistribution)
        let chat = try conversation.aliceSends(plaintext(4))
        assertFails(.invalidPadding, &conversation) { _ = try $0.bobReceives(chat, contentType: .senderKeyDistribution) }
        assertFails(.invalidPadding, &conversation) { _ = try $0.bobReceives(distribution) }
        XCTAssertEqual(try conversation.bobReceives(chat), plaintext(4))
        // Now through the stored skipped key, which a wrong type leaves in place.
        assertFails(.invalidPadding, &conversation) { _ = try $0.bobReceives(distribution) }
        XCTAssertEqual(try conversation.bobReceives(distribution, contentType: .senderKeyDistribution), plaintext(3))
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 0)
    }

    // MARK: Envelopes through the manager

    func testADistributionEnvelopeRelabelledAsAMessageIsInvalidPaddingAndStillProcessesUnderItsOwnKind() async throws {
        let server = FakeServer()
        let team = groupID("team")
        let alice = try await TestDevice("alice", 1, seed: 7701, server: server)
        let bob = try await TestDevice("bob", 1, seed: 7702, server: server)
        try await makeGroup(team, of: [alice, bob])
        try await alice.startSession(with: bob.address, server: server)

        // Twice: first as a prekey message (no session at Bob yet), then as a 0x21 message.
        for round in 0 ..< 2 {
            let outcomes = round == 0
                ? try await alice.manager.distributeSenderKey(for: team, to: [bob.address])
                : try await alice.manager.removeMembers([], from: team, remaining: [bob.address])
            let distribution = try XCTUnwrap(outcomes.first?.envelope)
            XCTAssertEqual(distribution.kind, .senderKeyDistribution)
            let relabelled = try MessageEnvelope(text: try MessageEnvelope(
                sender: distribution.sender, recipient: distribution.recipient, kind: .message, body: distribution.body
            ).encodedText())
            let before = await bob.snapshot(groups: [team], senders: [alice.address])
            let handed = HandedToApp()
            await assertThrowsAsync(.invalidPadding) {
                try await bob.manager.receive(relabelled, beforePersisting: { (message: ReceivedMessage) async throws(SessionError) in
                    await handed.add(message.plaintext ?? [])
                })
            }
            await assertThrowsAsync(.invalidPadding) { try await bob.manager.decrypt(distribution.body, from: alice.address) }
            let after = await bob.snapshot(groups: [team], senders: [alice.address])
            XCTAssertEqual(after, before, "round \(round): no session, prekey or chain changed")
            let seen = await handed.all
            XCTAssertEqual(seen, [], "round \(round): the chain key never reaches the app as chat text")

            // Delivered again under its own kind, the same bytes work.
            guard case .senderKeyDistribution(team, alice.address, _, _, _) = try await bob.manager.receive(distribution) else {
                return XCTFail("round \(round): a distribution")
            }
            let groupMessage = try await alice.manager.groupEncryptEnvelope(utf8("round \(round)"), for: team)
            let received = try await bob.manager.receive(groupMessage)
            XCTAssertEqual(received.plaintext, utf8("round \(round)"))
            if round == 0 {
                // A reply, so that Alice's next message is a 0x21 message.
                let reply = try await bob.manager.encryptEnvelope(utf8("got it"), to: alice.address)
                _ = try await alice.manager.receive(reply)
            }
        }
    }

    func testAMessageEnvelopeRelabelledAsADistributionIsInvalidPaddingAndStoresNothing() async throws {
        let server = FakeServer()
        let team = groupID("team")
        let alice = try await TestDevice("alice", 1, seed: 7801, server: server)
        let bob = try await TestDevice("bob", 1, seed: 7802, server: server)
        try await makeGroup(team, of: [alice, bob])
        try await alice.startSession(with: bob.address, server: server)

        // Twice: a prekey message, then (after a reply) a 0x21 message.
        for round in 0 ..< 2 {
            let message = try await alice.manager.encryptEnvelope(utf8("chat \(round)"), to: bob.address)
            let relabelled = try MessageEnvelope(
                sender: message.sender, recipient: message.recipient, kind: .senderKeyDistribution, group: team, body: message.body)
            let before = await bob.snapshot(groups: [team], senders: [alice.address])
            await assertThrowsAsync(.invalidPadding) { try await bob.manager.receive(relabelled) }
            await assertThrowsAsync(.invalidPadding) {
                try await bob.manager.processSenderKeyDistribution(encrypted: message.body, for: team, from: alice.address)
            }
            let after = await bob.snapshot(groups: [team], senders: [alice.address])
            XCTAssertEqual(after, before, "round \(round): no session, prekey or chain changed")
            let chains = await bob.base.loadReceiverState(for: team, sender: alice.address)
            XCTAssertNil(chains, "round \(round): no chain stored")

            let received = try await bob.manager.receive(message)
            XCTAssertEqual(received.plaintext, utf8("chat \(round)"))
            let reply = try await bob.manager.encryptEnvelope(utf8("reply \(round)"), to: alice.address)
            _ = try await alice.manager.receive(reply)
        }
    }
}

/// What a `beforePersisting` step was handed.
private actor HandedToApp {
    private(set) var all: [[UInt8]] = []
    func add(_ plaintext: [UInt8]) { all.append(plaintext) }
}

extension Conversation {
    /// Bob decrypts expecting `contentType` (see `bobReceives(_:from:)`).
    mutating func bobReceives(_ message: [UInt8], contentType: MessagePadding.ContentType) throws(SessionError) -> [UInt8] {
        let result = try bobRecord.decrypt(
            message, identity: bobIdentity, localAddress: bobAddress, remoteAddress: aliceAddress, preKeys: bobPreKeys,
            kem: kem, configuration: configuration, random: bobRandom, contentType: contentType)
        if let consumption = result.consumption { try bobPreKeys.apply(consumption) }
        return result.plaintext
    }

    /// Alice decrypts expecting `contentType` (see `aliceReceives(_:from:)`).
    mutating func aliceReceives(_ message: [UInt8], contentType: MessagePadding.ContentType) throws(SessionError) -> [UInt8] {
        let result = try aliceRecord.decrypt(
            message, identity: aliceIdentity, localAddress: aliceAddress, remoteAddress: bobAddress,
            preKeys: alicePreKeys, kem: kem, configuration: configuration, random: aliceRandom, contentType: contentType)
        if let consumption = result.consumption { try alicePreKeys.apply(consumption) }
        return result.plaintext
    }
}
