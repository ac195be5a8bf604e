import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Hybrid (PQXDH) sessions at the record level (`Conversation` with ML-KEM-768): the KEM part
/// of the prefix, what X3DH reports consumed, and the responder's lookup order (SPEC §3).
final class HybridSessionRecordTests: XCTestCase {
    /// Offsets in a prekey message with a one-time prekey and a KEM part.
    private let kemIDOffset = 74, ciphertextOffset = 78, innerOffset = 74 + 1092

    func testAHybridConversationReportsTheOneTimeKEMPrekeyItConsumed() throws {
        var conversation = try Conversation(seed: 6001, kem: try mlkem())
        let first = try conversation.aliceSends(plaintext(0))
        XCTAssertEqual(first[69], 0x03)
        XCTAssertEqual(Array(first[kemIDOffset ..< ciphertextOffset]), u32(77))
        let result = try conversation.bobRecord.decrypt(
            first, identity: conversation.bobIdentity, localAddress: conversation.bobAddress, remoteAddress: conversation.aliceAddress,
            preKeys: conversation.bobPreKeys, kem: conversation.kem, random: conversation.bobRandom)
        XCTAssertEqual(result.plaintext, plaintext(0))
        let consumption = try XCTUnwrap(result.consumption)
        XCTAssertEqual(consumption.oneTimeKEMPreKeyID, 77)
        XCTAssertEqual(consumption.oneTimePreKeyID, 42)
        XCTAssertEqual(consumption.signedPreKeyID, 7)
        try conversation.bobPreKeys.apply(consumption)
        XCTAssertTrue(conversation.bobPreKeys.kemPreKeys.isEmpty)
        XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(1))), plaintext(1))
        XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(2))), plaintext(2))
        XCTAssertNil(conversation.alice?.pendingPreKeyPrefix, "no more prekey messages after a reply")
    }

    func testALastResortKEMPrekeyIsNotReportedConsumed() throws {
        let kem = try mlkem()
        let random = SeededRandomSource(seed: 6002)
        let bob = try IdentityKeyPair(using: random)
        let alice = try IdentityKeyPair(using: random)
        let signed = try SignedPreKey(id: 1, signedBy: bob, signsKEMPreKeys: true, using: random)
        let lastResort = try KEMPreKey(id: 5, kind: .lastResort, signedBy: bob, kem: kem, using: random)
        var keys = PreKeySet(signedPreKeys: [signed], kemPreKeys: [lastResort])
        let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: signed, oneTimePreKey: nil, kemPreKey: lastResort)
        for index in 0 ..< 2 {
            var session = try SessionState(initiatingWith: bundle, identity: alice, localAddress: address("alice", 1),
                                           remoteAddress: address("bob", 1), kem: kem, random: random)
            var record = SessionRecord()
            let result = try record.decrypt(try session.encrypt([UInt8(index)]), identity: bob, localAddress: address("bob", 1),
                                            remoteAddress: address("alice", 1), preKeys: keys, kem: kem, random: random)
            XCTAssertEqual(result.plaintext, [UInt8(index)])
            XCTAssertNil(result.consumption?.oneTimeKEMPreKeyID, "a last-resort KEM prekey is kept")
            try keys.apply(try XCTUnwrap(result.consumption))
            XCTAssertNotNil(keys.kemPreKey(id: 5))
        }
    }

    /// A prekey message with the EK_A of an existing session must carry that session's whole
    /// prefix, its KEM part included (kem_id and CT).
    func testAPrekeyMessageWithTheSessionsEphemeralKeyMustCarryTheSameKEMPart() throws {
        var conversation = try Conversation(seed: 6003, kem: try mlkem())
        let first = try conversation.aliceSends(plaintext(0))
        let second = try conversation.aliceSends(plaintext(1))
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(0))
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(flipped(second, at: self.kemIDOffset + 3)) }
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(flipped(second, at: self.ciphertextOffset + 500)) }
        var withoutKEM = second
        withoutKEM[69] = 0x01
        withoutKEM.removeSubrange(kemIDOffset ..< innerOffset)
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(withoutKEM) }
        XCTAssertEqual(try conversation.bobReceives(second), plaintext(1))
    }

    /// Before any session: an altered CT decapsulates (implicit rejection) to another secret, so
    /// the message does not authenticate; a KEM prekey id that is not held is `unknownPreKey`.
    /// Neither consumes or records anything.
    func testAFailedHybridPrekeyMessageConsumesNoKEMPrekey() throws {
        var conversation = try Conversation(seed: 6004, kem: try mlkem())
        let first = try conversation.aliceSends(plaintext(0))
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(flipped(first, at: self.ciphertextOffset + 100)) }
        assertFails(.unknownPreKey, &conversation) { _ = try $0.bobReceives(flipped(first, at: self.kemIDOffset + 3)) }
        XCTAssertNil(conversation.bob)
        XCTAssertEqual(conversation.bobPreKeys.kemPreKeys.keys.sorted(), [77])
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(0))
        XCTAssertTrue(conversation.bobPreKeys.kemPreKeys.isEmpty)
    }

    /// SPEC §3's lookup order: the session created from the same EK_A, then spk_id, then the
    /// EK_A record, then opk_id, then kem_id. A replay whose session is gone names a one-time
    /// prekey and a one-time KEM prekey that are both used up, and is reported as the replay
    /// it is (`duplicateMessage`); an unknown spk_id comes first of all.
    func testTheResponderLooksUpTheEphemeralKeyRecordBeforeTheOneTimePrekeys() throws {
        var conversation = try Conversation(seed: 6005, kem: try mlkem())
        let first = try conversation.aliceSends(plaintext(0))
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(0))
        conversation.bob = nil
        assertFails(.duplicateMessage, &conversation) { _ = try $0.bobReceives(first) }
        assertFails(.unknownPreKey, &conversation) { _ = try $0.bobReceives(flipped(first, at: 68)) }
        // A new EK_A naming the used one-time prekeys: now the one-time prekey is the first miss.
        var other = try SessionState(initiatingWith: conversation.bundle, identity: conversation.aliceIdentity,
                                     localAddress: conversation.aliceAddress, remoteAddress: conversation.bobAddress,
                                     kem: conversation.kem, random: SeededRandomSource(seed: 6006))
        assertFails(.unknownPreKey, &conversation) { _ = try $0.bobReceives(try other.encrypt(plaintext(1))) }
    }

    /// The prekey message's KEM part and the stripped-KEM rule at the lowest level: a message
    /// without a KEM part to a signed prekey signed with `kem` = 1 is `invalidMessage` (before
    /// any DH), `postQuantumRequired` with the requirement, and accepted with the migration switch.
    func testTheStrippedKEMRuleAtTheSessionLevel() throws {
        let kem = try mlkem()
        let conversation = try Conversation(seed: 6007, kem: kem)
        let classic = try PostQuantumSessionTests.classicPreKeyMessage(
            plaintext(0), from: conversation.aliceIdentity, at: conversation.aliceAddress, to: conversation.bundle,
            at: conversation.bobAddress, random: SeededRandomSource(seed: 6008))
        func accept(_ configuration: SessionConfiguration) throws -> SessionState.Establishment {
            try SessionState.accept(
                try PreKeyMessage(serialized: classic), identity: conversation.bobIdentity, localAddress: conversation.bobAddress,
                remoteAddress: conversation.aliceAddress, preKeys: conversation.bobPreKeys, kem: kem, configuration: configuration,
                random: conversation.bobRandom)
        }
        let draws = conversation.bobRandom.drawCount
        XCTAssertThrowsError(try accept(.default)) { XCTAssertEqual($0 as? SessionError, .invalidMessage) }
        XCTAssertThrowsError(try accept(try SessionConfiguration(requirePostQuantum: true))) {
            XCTAssertEqual($0 as? SessionError, .postQuantumRequired)
        }
        XCTAssertEqual(conversation.bobRandom.drawCount, draws)
        let established = try accept(try SessionConfiguration(allowsClassicSessionsDuringMigration: true))
        XCTAssertEqual(established.plaintext, plaintext(0))
        XCTAssertNil(established.consumption.oneTimeKEMPreKeyID)
        XCTAssertEqual(established.consumption.oneTimePreKeyID, 42)
    }
}
