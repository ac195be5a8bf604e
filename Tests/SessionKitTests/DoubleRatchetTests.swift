import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit

/// SPEC §4: the Double Ratchet between two parties, each through its `SessionRecord` for the
/// other (`Conversation`).
final class DoubleRatchetTests: XCTestCase {
    private func established(seed: UInt64 = 1, configuration: SessionConfiguration = .default) throws -> Conversation {
        var conversation = try Conversation(seed: seed, configuration: configuration)
        XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(0))), plaintext(0))
        XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(1))), plaintext(1))
        return conversation
    }

    // MARK: Delivery order

    func testMessagesDeliveredInOrderDecryptAcrossManyDHSteps() throws {
        var conversation = try Conversation(seed: 2)
        for round in 0 ..< 20 {
            for burst in 0 ..< 3 {
                let index = round * 10 + burst
                XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(index))), plaintext(index))
            }
            XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(round))), plaintext(round))
        }
        XCTAssertEqual(conversation.alice?.skippedMessageKeyCount, 0)
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 0)
    }

    func testOutOfOrderMessagesWithinOneChainDecrypt() throws {
        var conversation = try established()
        let messages = try (0 ..< 6).map { try conversation.aliceSends(plaintext(10 + $0)) }
        for index in [4, 1, 5, 0, 3, 2] {
            XCTAssertEqual(try conversation.bobReceives(messages[index]), plaintext(10 + index))
        }
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 0)
    }

    func testOutOfOrderMessagesAcrossDHStepsDecrypt() throws {
        var conversation = try established()
        let firstChain = try (0 ..< 3).map { try conversation.aliceSends(plaintext(20 + $0)) }
        XCTAssertEqual(try conversation.bobReceives(firstChain[1]), plaintext(21))
        XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(30))), plaintext(30))
        let secondChain = try (0 ..< 3).map { try conversation.aliceSends(plaintext(40 + $0)) }
        // The new chain first: the old chain's keys up to PN = 3 are stored by the DH step.
        XCTAssertEqual(try conversation.bobReceives(secondChain[2]), plaintext(42))
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 4)
        XCTAssertEqual(try conversation.bobReceives(firstChain[2]), plaintext(22))
        XCTAssertEqual(try conversation.bobReceives(secondChain[0]), plaintext(40))
        XCTAssertEqual(try conversation.bobReceives(firstChain[0]), plaintext(20))
        XCTAssertEqual(try conversation.bobReceives(secondChain[1]), plaintext(41))
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 0)
    }

    func testCrossingMessagesDecrypt() throws {
        var conversation = try established()
        let fromAlice = try conversation.aliceSends(plaintext(50))
        let fromBob = try conversation.bobSends(plaintext(51))
        XCTAssertEqual(try conversation.bobReceives(fromAlice), plaintext(50))
        XCTAssertEqual(try conversation.aliceReceives(fromBob), plaintext(51))
        XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(52))), plaintext(52))
        XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(53))), plaintext(53))
    }

    // MARK: Prekey messages

    func testInitiatorSendsPreKeyMessagesUntilItDecryptsAReply() throws {
        var conversation = try Conversation(seed: 4)
        let first = try conversation.aliceSends(plaintext(0))
        let second = try conversation.aliceSends(plaintext(1))
        XCTAssertEqual(first.first, WireType.preKeyMessage)
        XCTAssertEqual(second.first, WireType.preKeyMessage)
        XCTAssertEqual(Array(first.prefix(74)), Array(second.prefix(74)), "the same prefix on every prekey message")
        XCTAssertEqual(first.count, 74 + 41 + 64 + 16)
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(0))
        let reply = try conversation.bobSends(plaintext(2))
        XCTAssertEqual(reply.first, WireType.ratchetMessage)
        XCTAssertEqual(try conversation.aliceSends(plaintext(3)).first, WireType.preKeyMessage, "no reply decrypted yet")
        XCTAssertEqual(try conversation.aliceReceives(reply), plaintext(2))
        XCTAssertEqual(try conversation.aliceSends(plaintext(4)).first, WireType.ratchetMessage)
        XCTAssertEqual(try conversation.bobReceives(second), plaintext(1), "a late prekey message still decrypts")
    }

    func testPreKeyMessagesOutOfOrderDecryptInOneSession() throws {
        var conversation = try Conversation(seed: 5)
        let messages = try (0 ..< 4).map { try conversation.aliceSends(plaintext($0)) }
        XCTAssertEqual(try conversation.bobReceives(messages[2]), plaintext(2))
        let session = try XCTUnwrap(conversation.bob)
        XCTAssertEqual(try conversation.bobReceives(messages[0]), plaintext(0))
        XCTAssertEqual(try conversation.bobReceives(messages[3]), plaintext(3))
        XCTAssertEqual(try conversation.bobReceives(messages[1]), plaintext(1))
        XCTAssertEqual(conversation.bob?.baseKey, session.baseKey, "no second session was created")
        XCTAssertEqual(conversation.bob?.preKeyPrefixDigest, session.preKeyPrefixDigest)
        XCTAssertTrue(conversation.bobRecord.previousSessions.isEmpty)
        XCTAssertTrue(conversation.bobPreKeys.oneTimePreKeys.isEmpty)
    }

    func testPreKeyMessageWithoutOneTimePreKeyUsesTheShortPrefix() throws {
        var conversation = try Conversation(seed: 6, oneTimePreKey: false)
        let message = try conversation.aliceSends([])
        XCTAssertEqual(message[69], 0x00)
        XCTAssertEqual(message.count, 70 + 41 + 64 + 16)
        XCTAssertEqual(try conversation.bobReceives(message), [])
    }

    func testPreKeyMessageMatchingTheSessionsEphemeralKeyMustMatchItsWholePrefix() throws {
        var conversation = try Conversation(seed: 7)
        let first = try conversation.aliceSends(plaintext(0))
        let second = try conversation.aliceSends(plaintext(1))
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(0))
        let otherIdentity = try IdentityKeyPair(using: SeededRandomSource(seed: 77)).publicKey.rawRepresentation
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(replacing(second, at: 1, with: otherIdentity)) }
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(flipped(second, at: 68)) }   // spk_id
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(flipped(second, at: 73)) }   // opk_id
        // Without the OPK part: flag 0x00 and the 4 id bytes removed.
        var withoutOPK = second
        withoutOPK[69] = 0x00
        withoutOPK.removeSubrange(70 ..< 74)
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(withoutOPK) }
        XCTAssertEqual(try conversation.bobReceives(second), plaintext(1))
    }

    func testRatchetMessageWithoutSessionIsNoSession() throws {
        var conversation = try Conversation(seed: 8)
        let prekey = try conversation.aliceSends(plaintext(0))
        let inner = Array(prekey[74...])
        assertFails(.noSession, &conversation) { _ = try $0.bobReceives(inner) }
    }

    func testPreKeyMessageToTheInitiatorIsUnknownPreKey() throws {
        var conversation = try Conversation(seed: 9)
        let prekey = try conversation.aliceSends(plaintext(0))
        assertFails(.unknownPreKey, &conversation) { _ = try $0.aliceReceives(prekey) }
    }

    func testUnknownSignedOrOneTimePreKeyIsUnknownPreKey() throws {
        var conversation = try Conversation(seed: 10)
        let prekey = try conversation.aliceSends(plaintext(0))
        assertFails(.unknownPreKey, &conversation) { _ = try $0.bobReceives(flipped(prekey, at: 68)) }
        assertFails(.unknownPreKey, &conversation) { _ = try $0.bobReceives(flipped(prekey, at: 73)) }
        XCTAssertNil(conversation.bob)
    }

    func testFailedPreKeyMessageCreatesNoSessionAndKeepsTheOneTimePreKey() throws {
        var conversation = try Conversation(seed: 12)
        let prekey = try conversation.aliceSends(plaintext(0))
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(flipped(prekey, at: prekey.count - 1)) }
        XCTAssertNil(conversation.bob)
        XCTAssertEqual(conversation.bobPreKeys.oneTimePreKeys.count, 1)
        XCTAssertEqual(try conversation.bobReceives(prekey), plaintext(0))
        XCTAssertEqual(conversation.bobPreKeys.oneTimePreKeys.count, 0)
    }

    // MARK: Replays and tampering

    func testReplayedMessageIsRejectedAndSessionStillWorks() throws {
        var conversation = try established()
        let message = try conversation.aliceSends(plaintext(60))
        XCTAssertEqual(try conversation.bobReceives(message), plaintext(60))
        assertFails(.duplicateMessage, &conversation) { _ = try $0.bobReceives(message) }
        XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(61))), plaintext(61))
        XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(62))), plaintext(62))
    }

    func testReplayOfAMessageWhoseSkippedKeyWasUsedIsDuplicate() throws {
        var conversation = try established()
        let messages = try (0 ..< 3).map { try conversation.aliceSends(plaintext(70 + $0)) }
        XCTAssertEqual(try conversation.bobReceives(messages[2]), plaintext(72))
        XCTAssertEqual(try conversation.bobReceives(messages[0]), plaintext(70))
        assertFails(.duplicateMessage, &conversation) { _ = try $0.bobReceives(messages[0]) }
    }

    func testReplayOfAnOldChainFails() throws {
        var conversation = try established()
        let old = try conversation.aliceSends(plaintext(80))
        XCTAssertEqual(try conversation.bobReceives(old), plaintext(80))
        XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(81))), plaintext(81))
        XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(82))), plaintext(82))
        let before = conversation.snapshot
        XCTAssertThrowsError(try conversation.bobReceives(old))
        XCTAssertEqual(conversation.snapshot, before)
    }

    func testTamperedMessagesAreInvalidAndTheGenuineOneStillDecrypts() throws {
        var conversation = try established()
        let message = try conversation.aliceSends(plaintext(90))
        XCTAssertEqual(message.first, WireType.ratchetMessage)
        // header.dh low bit (still canonical: a DH step that fails authentication), PN, N, ciphertext, tag.
        for index in [1, 36, 40, 41, 60, message.count - 1] {
            assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(flipped(message, at: index)) }
        }
        XCTAssertEqual(try conversation.bobReceives(message), plaintext(90))
    }

    func testFailedDHStepDrawsNoKey() throws {
        var conversation = try established()
        let message = try conversation.aliceSends(plaintext(91))
        let draws = conversation.bobRandom.drawCount
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(flipped(message, at: 50)) }
        XCTAssertEqual(conversation.bobRandom.drawCount, draws)
        XCTAssertEqual(try conversation.bobReceives(message), plaintext(91))
        XCTAssertEqual(conversation.bobRandom.drawCount, draws + 1, "the DH step draws exactly one key, after authentication")
    }

    func testAuthenticMessageWithBadPaddingIsInvalidPaddingAndChangesNothing() throws {
        var conversation = try established()
        // A message Alice could send next, sealed over bytes that are not valid padding.
        var forger = try XCTUnwrap(conversation.alice)
        let header = [UInt8](try forger.encrypt([]).prefix(41))
        var probe = try XCTUnwrap(conversation.alice)
        let genuine = try probe.encrypt(plaintext(1))
        let mk = try XCTUnwrap(conversation.alice).ratchet.sendingChain.map { chain -> [UInt8] in
            var key = [UInt8](repeating: 0, count: 32)
            _ = key.withUnsafeMutableBytes { chain.advance(writingMessageKeyInto: $0) }
            return key
        } ?? []
        let okm = try HKDF.deriveKey(inputKeyMaterial: mk, salt: [UInt8](repeating: 0, count: 32),
                                     info: Array("SessionKit MessageKeys v2".utf8), outputByteCount: 44)
        let aad = (try XCTUnwrap(conversation.alice)).associatedDataBytes + header
        for badPadding: [UInt8] in [[], [0x02, 0, 0, 0, 0], [0x01, 0, 0, 0, 1]] {
            let ct = try AES256GCM.seal(badPadding, using: SymmetricKey(data: Array(okm[0 ..< 32])), nonce: Array(okm[32 ..< 44]), authenticating: aad)
            assertFails(.invalidPadding, &conversation) { _ = try $0.bobReceives(header + ct) }
        }
        XCTAssertEqual(Array(genuine.prefix(41)), header)
        XCTAssertEqual(try conversation.bobReceives(genuine), plaintext(1))
    }

    // MARK: Keys on the wire

    func testNonCanonicalKeysAreInvalidKey() throws {
        var conversation = try established()
        let message = try conversation.aliceSends(plaintext(100))
        let highBit = flipped(message, at: 32, bit: 7)
        let p = [0xED] + [UInt8](repeating: 0xFF, count: 30) + [0x7F]       // 2^255 − 19
        assertFails(.invalidKey, &conversation) { _ = try $0.bobReceives(highBit) }
        assertFails(.invalidKey, &conversation) { _ = try $0.bobReceives(replacing(message, at: 1, with: p)) }
        // Small order (u = 0 and u = 1): canonical, but the DH output is all zero.
        for u: UInt8 in [0, 1] {
            let small = [u] + [UInt8](repeating: 0, count: 31)
            assertFails(.invalidKey, &conversation) { _ = try $0.bobReceives(replacing(message, at: 1, with: small)) }
        }
        XCTAssertEqual(try conversation.bobReceives(message), plaintext(100))
    }

    func testNonCanonicalKeysInPreKeyMessagesAreInvalidKey() throws {
        var conversation = try Conversation(seed: 13)
        let prekey = try conversation.aliceSends(plaintext(0))
        assertFails(.invalidKey, &conversation) { _ = try $0.bobReceives(flipped(prekey, at: 64, bit: 7)) }          // EK_A
        assertFails(.invalidKey, &conversation) { _ = try $0.bobReceives(flipped(prekey, at: 74 + 32, bit: 7)) }     // header.dh
        assertFails(.invalidKey, &conversation) { _ = try $0.bobReceives(replacing(prekey, at: 33, with: [UInt8](repeating: 0, count: 32))) }
        XCTAssertEqual(try conversation.bobReceives(prekey), plaintext(0))
    }

    func testMessageOnTheSignedPreKeyBeforeAnyReplyIsInvalidMessage() throws {
        var conversation = try Conversation(seed: 14)
        let spk = conversation.signedPreKey.publicKey.rawRepresentation
        let forged = [WireType.ratchetMessage] + spk + [0, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0xAB, count: 80)
        assertFails(.invalidMessage, &conversation) { _ = try $0.aliceReceives(forged) }
    }

    // MARK: Skipping limits

    func testExactlyMaxSkipIsAcceptedAndOneMoreIsRejected() throws {
        var conversation = try established()
        let maxSkip = conversation.configuration.maxSkip
        let messages = try (0 ... maxSkip + 1).map { try conversation.aliceSends(plaintext($0)) }
        assertFails(.tooManySkippedMessages, &conversation) { _ = try $0.bobReceives(messages[maxSkip + 1]) }
        XCTAssertEqual(try conversation.bobReceives(messages[maxSkip]), plaintext(maxSkip))
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, maxSkip)
        XCTAssertEqual(try conversation.bobReceives(messages[maxSkip + 1]), plaintext(maxSkip + 1))
        for index in (0 ..< maxSkip).reversed() {
            XCTAssertEqual(try conversation.bobReceives(messages[index]), plaintext(index))
        }
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 0)
    }

    func testSkipLimitAppliesToThePreviousChainLengthWithoutAReceivingChain() throws {
        var conversation = try Conversation(seed: 15)
        let someKey = try X25519.PrivateKey(using: SeededRandomSource(seed: 5)).publicKey.rawRepresentation
        var header = [WireType.ratchetMessage] + someKey
        header.appendBigEndian(UInt32(conversation.configuration.maxSkip + 1))
        header.appendBigEndian(UInt32(0))
        assertFails(.tooManySkippedMessages, &conversation) { _ = try $0.aliceReceives(header + [UInt8](repeating: 0, count: 80)) }
    }

    func testSkippedKeysBeyondMaxStoredEvictTheOldest() throws {
        let configuration = try SessionConfiguration(maxSkip: 4, maxStored: 6)
        var conversation = try established(configuration: configuration)
        let messages = try (0 ..< 11).map { try conversation.aliceSends(plaintext($0)) }
        XCTAssertEqual(try conversation.bobReceives(messages[4]), plaintext(4))     // stores 0 ... 3
        XCTAssertEqual(try conversation.bobReceives(messages[9]), plaintext(9))     // stores 5 ... 8, evicts 0 and 1
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 6)
        assertFails(.duplicateMessage, &conversation) { _ = try $0.bobReceives(messages[0]) }
        assertFails(.duplicateMessage, &conversation) { _ = try $0.bobReceives(messages[1]) }
        for index in [2, 3, 5, 6, 7, 8, 10] {
            XCTAssertEqual(try conversation.bobReceives(messages[index]), plaintext(index))
        }
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 0)
    }

    func testDefaultLimitsKeepTheNewest2000SkippedKeys() throws {
        var conversation = try established()
        let maxSkip = conversation.configuration.maxSkip, maxStored = conversation.configuration.maxStored
        let gaps = maxStored / maxSkip + 1                                   // 8 gaps of 256 keys: 2048 > 2000
        let messages = try (0 ..< gaps * (maxSkip + 1)).map { try conversation.aliceSends(plaintext($0, length: 1)) }
        for gap in 1 ... gaps {
            let index = gap * (maxSkip + 1) - 1
            XCTAssertEqual(try conversation.bobReceives(messages[index]), plaintext(index, length: 1))
        }
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, maxStored)
        let evicted = gaps * maxSkip - maxStored                             // the 48 oldest
        assertFails(.duplicateMessage, &conversation) { _ = try $0.bobReceives(messages[0]) }
        assertFails(.duplicateMessage, &conversation) { _ = try $0.bobReceives(messages[evicted - 1]) }
        XCTAssertEqual(try conversation.bobReceives(messages[evicted]), plaintext(evicted, length: 1))
        XCTAssertEqual(try conversation.bobReceives(messages[messages.count - 2]), plaintext(messages.count - 2, length: 1))
    }

    func testEvictionFollowsInsertionAgeAcrossChains() throws {
        let configuration = try SessionConfiguration(maxSkip: 4, maxStored: 6)
        var conversation = try established(configuration: configuration)
        let oldChain = try (0 ..< 4).map { try conversation.aliceSends(plaintext($0)) }
        XCTAssertEqual(try conversation.bobReceives(oldChain[3]), plaintext(3))                 // stores old 0 ... 2
        XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(50))), plaintext(50))
        let newChain = try (0 ..< 5).map { try conversation.aliceSends(plaintext(10 + $0)) }
        XCTAssertEqual(try conversation.bobReceives(newChain[4]), plaintext(14))                // stores new 0 ... 3, evicts old 0
        assertFails(.duplicateMessage, &conversation) { _ = try $0.bobReceives(newChain[4]) }
        let before = conversation.snapshot
        XCTAssertThrowsError(try conversation.bobReceives(oldChain[0]), "evicted key of an older chain")
        XCTAssertEqual(conversation.snapshot, before)
        for (index, message) in [(1, oldChain[1]), (2, oldChain[2])] {
            XCTAssertEqual(try conversation.bobReceives(message), plaintext(index))
        }
        for index in 0 ..< 4 { XCTAssertEqual(try conversation.bobReceives(newChain[index]), plaintext(10 + index)) }
    }

    // MARK: Sizes and counters

    func testEmptyAndLargePlaintextsRoundTrip() throws {
        var conversation = try established()
        let empty = try conversation.aliceSends([])
        XCTAssertEqual(empty.count, 41 + 64 + 16)
        XCTAssertEqual(try conversation.bobReceives(empty), [])
        let large = plaintext(7, length: 70_000)
        let message = try conversation.bobSends(large)
        XCTAssertEqual(message.count, 41 + 131_072 + 16)
        XCTAssertEqual(try conversation.aliceReceives(message), large)
    }

    func testTruncatedAndUnknownMessagesAreRejected() throws {
        var conversation = try established()
        let message = try conversation.aliceSends(plaintext(5))
        for length in [0, 1, 41, 56] {
            assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(Array(message.prefix(length))) }
        }
        // Version 1's type bytes (0x01, 0x02, 0x10, 0x11, 0x20) included.
        for type: UInt8 in [0x00, 0x01, 0x02, 0x03, 0x10, 0x11, 0x20, 0x23, 0x24, 0x25, 0x26, 0xFF] {
            assertFails(.unsupportedVersion, &conversation) { _ = try $0.bobReceives(replacing(message, at: 0, with: [type])) }
        }
        XCTAssertEqual(try conversation.bobReceives(message), plaintext(5))
    }

    func testSendingPastTheLastCounterIsChainExhausted() throws {
        var conversation = try established()
        conversation.alice?.ratchet.sendCounter = UInt64(UInt32.max)
        let last = try conversation.aliceSends(plaintext(1))
        XCTAssertEqual(last.readBigEndianUInt32(at: 37), UInt32.max)
        let before = try XCTUnwrap(conversation.alice).serialized()
        XCTAssertThrowsError(try conversation.aliceSends(plaintext(2))) { XCTAssertEqual($0 as? SessionError, .chainExhausted) }
        XCTAssertEqual(try XCTUnwrap(conversation.alice).serialized(), before)
    }

    func testConfigurationRequiresMaxSkipAtMostMaxStored() throws {
        XCTAssertEqual(SessionConfiguration.default.maxSkip, 256)
        XCTAssertEqual(SessionConfiguration.default.maxStored, 2000)
        XCTAssertNoThrow(try SessionConfiguration(maxSkip: 10, maxStored: 10))
        for (skip, stored) in [(11, 10), (-1, 10), (0, -1)] {
            XCTAssertThrowsError(try SessionConfiguration(maxSkip: skip, maxStored: stored)) {
                guard case .invalidConfiguration = $0 as? SessionError else { return XCTFail("\($0)") }
            }
        }
    }

    func testSessionDescriptionHidesSecrets() throws {
        let conversation = try established()
        let session = try XCTUnwrap(conversation.bob)
        let root = Hex.encode(session.ratchet.rootKey.storage.bytes)
        XCTAssertFalse("\(session)".contains(root))
        XCTAssertFalse(String(reflecting: session).contains(root))
    }
}
