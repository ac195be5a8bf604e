import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// SPEC §5 behaviour of one sender's chain as a receiver sees it.
final class SenderKeyTests: XCTestCase {
    private typealias Support = GroupTestSupport

    /// The context every chain of `Support.chainAndReceiver` belongs to.
    private let group = Support.group
    private let member = Support.sender

    /// Asserts that decrypting `message` (for `group`, from `sender`) throws `expected` and
    /// leaves `receiver`'s serialized state unchanged.
    private func assertRejects(
        _ message: [UInt8], by receiver: inout SenderKeyReceiverState, with expected: SessionError,
        group: GroupID = Support.group, sender: ProtocolAddress = Support.sender,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let before = receiver.serialized()
        XCTAssertThrowsError(try receiver.decrypt(message, for: group, from: sender), file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, file: file, line: line)
        }
        XCTAssertEqual(receiver.serialized(), before, "a failed decryption changed the state", file: file, line: line)
    }

    /// Decrypts in the chains' own context.
    private func open(_ message: [UInt8], _ receiver: inout SenderKeyReceiverState) throws -> [UInt8] {
        try receiver.decrypt(message, for: group, from: member)
    }

    private func plaintext(_ index: Int) -> [UInt8] { Array("message \(index)".utf8) }

    func testMessagesDecryptInOrder() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 1)
        for index in 0 ..< 20 {
            let message = try sender.encrypt(plaintext(index))
            XCTAssertEqual(try open(message, &receiver), plaintext(index))
        }
        XCTAssertEqual(receiver.iteration(of: sender.chainID), 20)
        XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), 0)
    }

    func testMessageCarriesHeaderCommitmentAndSignatureOfSpecSection5() throws {
        var (sender, _) = try Support.chainAndReceiver(seed: 2, iteration: 7)
        let message = try sender.encrypt([1, 2, 3])
        XCTAssertEqual(message[0], 0x24)
        XCTAssertEqual(Array(message[1 ..< 33]), sender.chainID.rawRepresentation)
        XCTAssertEqual(Array(message[33 ..< 37]), [0, 0, 0, 7])
        // 37-byte header, 32-byte commitment, 64-byte padded plaintext, 16-byte tag, 64-byte signature.
        XCTAssertEqual(message.count, 37 + 32 + 64 + 16 + 64)
        // The signature covers Encode(group) || Encode(sender) || every byte before it.
        let context = Support.encodeGroup("test group") + encodeAddress("sender", 3)
        XCTAssertTrue(sender.signingPublicKey.isValidSignature(Array(message.suffix(64)), for: context + Array(message.dropLast(64))))
        XCTAssertFalse(sender.signingPublicKey.isValidSignature(Array(message.suffix(64)), for: Array(message.dropLast(64))))
        XCTAssertEqual(sender.iteration, 8)
        XCTAssertEqual(sender.group, group)
        XCTAssertEqual(sender.sender, member)
    }

    func testChainIDIsSHA256OfTheInitialChainKeyAndTheDistributionCarriesTheGroup() throws {
        let initial = [UInt8](repeating: 0x42, count: 32)
        let chain = try SenderKeySendingChain(group: group, sender: member, initialChainKey: initial,
                                              signingKey: Ed25519.PrivateKey(seed: [UInt8](repeating: 1, count: 32)), iteration: 3)
        XCTAssertEqual(chain.chainID.rawRepresentation, SHA256.hash(initial))
        // The distribution carries the chain key at iteration 3: HMAC(ck, 0x02) applied three times.
        var expectedKey = initial
        for _ in 0 ..< 3 { expectedKey = HMACSHA256.authenticationCode(for: [0x02], using: expectedKey) }
        let distribution = try chain.distributionMessage().serialized
        // 0x23 || Encode(group) (11 bytes for "test group") || chain_id || u32(iteration) || chain_key || signing_pk.
        XCTAssertEqual(distribution.count, 102 + 10)
        XCTAssertEqual(distribution[0], 0x23)
        XCTAssertEqual(Array(distribution[1 ..< 12]), Support.encodeGroup("test group"))
        XCTAssertEqual(Array(distribution[12 ..< 44]), SHA256.hash(initial))
        XCTAssertEqual(Array(distribution[44 ..< 48]), [0, 0, 0, 3])
        XCTAssertEqual(Array(distribution[48 ..< 80]), expectedKey)
        XCTAssertEqual(Array(distribution[80 ..< 112]), chain.signingPublicKey.rawRepresentation)
        XCTAssertEqual(try chain.distributionMessage().group, group)
    }

    func testMessageMatchesTheSpecFormulasBuiltFromPrimitives() throws {
        var generator = SplitMix64(seed: 3)
        let signing = try Ed25519.PrivateKey(seed: Support.bytes(32, using: &generator))
        let initial = Support.bytes(32, using: &generator)
        var sender = try SenderKeySendingChain(group: group, sender: member, initialChainKey: initial, signingKey: signing, iteration: 1)
        let chainKeyAt1 = HMACSHA256.authenticationCode(for: [0x02], using: initial)
        let expected = try Support.senderKeyMessage(chainKeyAtIteration: chainKeyAt1, iteration: 1, chainID: SHA256.hash(initial),
                                                    padded: MessagePadding.pad([9, 9, 9]), signingKey: signing)
        XCTAssertEqual(try sender.encrypt([9, 9, 9]), expected)
    }

    func testOutOfOrderMessagesDecryptFromSkippedKeys() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 4)
        let messages = try (0 ..< 10).map { try sender.encrypt(plaintext($0)) }
        for index in [3, 0, 9, 1, 2, 8, 4, 7, 5, 6] {
            XCTAssertEqual(try open(messages[index], &receiver), plaintext(index))
        }
        XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), 0)
        XCTAssertEqual(receiver.iteration(of: sender.chainID), 10)
    }

    func testReplayedMessageIsDuplicateAndChainStillWorks() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 5)
        let first = try sender.encrypt(plaintext(0))
        let second = try sender.encrypt(plaintext(1))
        let third = try sender.encrypt(plaintext(2))
        XCTAssertEqual(try open(second, &receiver), plaintext(1))
        assertRejects(second, by: &receiver, with: .duplicateMessage)        // replay of the current chain position
        XCTAssertEqual(try open(first, &receiver), plaintext(0))             // from its skipped key
        assertRejects(first, by: &receiver, with: .duplicateMessage)         // the skipped key is gone
        XCTAssertEqual(try open(third, &receiver), plaintext(2))
        XCTAssertEqual(try open(try sender.encrypt(plaintext(3)), &receiver), plaintext(3))
    }

    func testForgedSignatureIsRejected() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 6)
        let genuine = try sender.encrypt(plaintext(0))
        // The same bytes signed by another key.
        let intruder = try Ed25519.PrivateKey(seed: [UInt8](repeating: 7, count: 32))
        let body = Array(genuine.dropLast(64))
        let context = Support.encodeGroup("test group") + encodeAddress("sender", 3)
        assertRejects(body + intruder.signature(for: context + body), by: &receiver, with: .invalidSignature)
        // Any change to the signed bytes after the chain id (iteration, commitment, ciphertext), or to the signature.
        for position in [33, 36, 37, 68, 69, 80, genuine.count - 65, genuine.count - 64, genuine.count - 1] {
            var altered = genuine
            altered[position] ^= 0x01
            assertRejects(altered, by: &receiver, with: .invalidSignature)
        }
        assertRejects(Array(genuine.dropLast()), by: &receiver, with: .invalidSignature)
        XCTAssertEqual(try open(genuine, &receiver), plaintext(0))
    }

    /// SPEC §5 binds the group and the sender into every message: a message relabeled to
    /// another group, or re-attributed to another sender who holds the same chain (a member
    /// passing another's chain off as its own), does not verify.
    func testAMessageRelabeledToAnotherGroupOrReattributedToAnotherSenderFails() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 7)
        let genuine = try sender.encrypt(plaintext(0))
        assertRejects(genuine, by: &receiver, with: .invalidSignature, group: groupID("another group"))
        assertRejects(genuine, by: &receiver, with: .invalidSignature, sender: address("sender", 4))
        assertRejects(genuine, by: &receiver, with: .invalidSignature, sender: address("mallory", 3))
        // The same chain stored for another group or under another sender (as a relabeled or
        // re-attributed distribution would put it) does not open it either.
        var (_, otherGroup) = try Support.chainAndReceiver(seed: 7, group: groupID("x"))
        XCTAssertEqual(otherGroup.chainIDs, [sender.chainID])
        XCTAssertThrowsError(try otherGroup.decrypt(genuine, for: groupID("x"), from: member)) {
            XCTAssertEqual($0 as? SessionError, .invalidSignature)
        }
        XCTAssertEqual(try open(genuine, &receiver), plaintext(0))
    }

    /// The commitment is checked before AEAD: a message whose commit does not match its key is
    /// refused even when its ciphertext and signature are valid for what it carries (a sender
    /// giving different members different chain keys under one chain id).
    func testAMessageWhoseCommitmentDoesNotMatchItsKeyIsInvalidMessage() throws {
        var generator = SplitMix64(seed: 8)
        let signing = try Ed25519.PrivateKey(seed: Support.bytes(32, using: &generator))
        let initial = Support.bytes(32, using: &generator)
        let sender = try SenderKeySendingChain(group: group, sender: member, initialChainKey: initial, signingKey: signing)
        var receiver = SenderKeyReceiverState()
        try receiver.processDistribution(try sender.distributionMessage().serialized, for: group)
        let padded = try MessagePadding.pad([1, 2, 3])
        let genuine = try Support.senderKeyMessage(chainKeyAtIteration: initial, iteration: 0, chainID: SHA256.hash(initial),
                                                   padded: padded, signingKey: signing)
        // The same, with another commitment that the AEAD authenticates and the signer signs.
        let uncommitted = try Support.senderKeyMessage(chainKeyAtIteration: initial, iteration: 0, chainID: SHA256.hash(initial),
                                                       padded: padded, signingKey: signing, commitment: [UInt8](repeating: 0xC0, count: 32))
        XCTAssertNotEqual(Array(uncommitted[37 ..< 69]), Array(genuine[37 ..< 69]))
        assertRejects(uncommitted, by: &receiver, with: .invalidMessage)
        XCTAssertEqual(try open(genuine, &receiver), [1, 2, 3])
    }

    func testMessageForUnknownChainIsRejected() throws {
        var (_, receiver) = try Support.chainAndReceiver(seed: 8)
        var (stranger, _) = try Support.chainAndReceiver(seed: 9)
        assertRejects(try stranger.encrypt(plaintext(0)), by: &receiver, with: .unknownChain)
        var empty = SenderKeyReceiverState()
        assertRejects(try stranger.encrypt(plaintext(1)), by: &empty, with: .unknownChain)
    }

    func testTypeByteIsCheckedBeforeLengthAndLengthBeforeChain() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 10)
        let genuine = try sender.encrypt(plaintext(0))
        // 0x11 is version 1's sender-key message type byte.
        for type: UInt8 in [0x00, 0x01, 0x02, 0x10, 0x11, 0x12, 0x20, 0x21, 0x23, 0x25, 0xff] {
            assertRejects([type] + genuine.dropFirst(), by: &receiver, with: .unsupportedVersion)
            assertRejects([type], by: &receiver, with: .unsupportedVersion)
        }
        assertRejects([], by: &receiver, with: .invalidMessage)
        assertRejects([0x24], by: &receiver, with: .invalidMessage)
        // 1 + 32 + 4 + 32 + 16 + 64 = 149 bytes is the minimum: one less is short even for a known chain.
        XCTAssertEqual(SenderKeyMessage.minimumByteCount, 149)
        assertRejects(Array(genuine.prefix(148)), by: &receiver, with: .invalidMessage)
        // 149 bytes with a known chain id passes the length check and fails the signature.
        assertRejects(Array(genuine.prefix(149)), by: &receiver, with: .invalidSignature)
        XCTAssertEqual(try open(genuine, &receiver), plaintext(0))
    }

    func testExactlyMaxSkipAheadDecryptsAndOneMoreIsRejected() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 11)
        let messages = try (0 ... 514).map { try sender.encrypt(plaintext($0)) }
        // The receiver is at iteration 0: iteration 257 is 257 ahead, 256 is exactly MAX_SKIP ahead.
        assertRejects(messages[257], by: &receiver, with: .tooManySkippedMessages)
        XCTAssertEqual(try open(messages[256], &receiver), plaintext(256))
        XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), 256)
        // Now at 257: 514 is 257 ahead, 513 exactly 256.
        assertRejects(messages[514], by: &receiver, with: .tooManySkippedMessages)
        XCTAssertEqual(try open(messages[513], &receiver), plaintext(513))
        XCTAssertEqual(try open(messages[514], &receiver), plaintext(514))
        for index in [0, 255, 257, 512] { XCTAssertEqual(try open(messages[index], &receiver), plaintext(index)) }
    }

    func testSkippedKeysBeyondMaxStoredEvictOldestFirst() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 12)
        let messages = try (0 ... 2048).map { try sender.encrypt(plaintext($0)) }
        // The first jump (to 256) stores 256 keys, each later one 255 (the message read is not
        // stored): 256 + 7 × 255 = 2041 after eight, so the oldest 41 (iterations 0 … 40) go.
        for jump in 1 ... 8 {
            XCTAssertEqual(try open(messages[jump * 256], &receiver), plaintext(jump * 256))
            XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), min(256 + (jump - 1) * 255, 2000))
        }
        // Evicted keys are above the chain's starting iteration (0): duplicates, not unavailable.
        for evicted in [0, 1, 40] { assertRejects(messages[evicted], by: &receiver, with: .duplicateMessage) }
        for kept in [41, 42, 255, 257, 2047] { XCTAssertEqual(try open(messages[kept], &receiver), plaintext(kept)) }
        XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), 1995)
    }

    func testAtMostFiveChainsPerSenderOldestDropped() throws {
        var receiver = SenderKeyReceiverState()
        var chains = [SenderKeySendingChain]()
        for seed in 20 ..< 26 {
            let (chain, _) = try Support.chainAndReceiver(seed: UInt64(seed))
            chains.append(chain)
            try receiver.processDistribution(try chain.distributionMessage().serialized, for: group)
        }
        XCTAssertEqual(receiver.chainIDs, chains.dropFirst().map(\.chainID))
        assertRejects(try chains[0].encrypt(plaintext(0)), by: &receiver, with: .unknownChain)
        for index in 1 ..< 6 { XCTAssertEqual(try open(try chains[index].encrypt(plaintext(index)), &receiver), plaintext(index)) }
    }

    func testDistributionForAHeldChainIsIgnored() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 30)
        let original = try sender.distributionMessage().serialized
        let first = try sender.encrypt(plaintext(0))
        XCTAssertEqual(try open(first, &receiver), plaintext(0))
        let before = receiver.serialized()
        // Neither the old distribution nor a newer one resets or moves the chain.
        try receiver.processDistribution(original, for: group)
        try receiver.processDistribution(try sender.distributionMessage().serialized, for: group)
        XCTAssertEqual(receiver.serialized(), before)
        assertRejects(first, by: &receiver, with: .duplicateMessage)
    }

    /// A member given the chain mid-stream cannot read what was sent before; SPEC §5 reports
    /// that as `messageKeyUnavailable`, which an app must not take for a duplicate it has seen.
    func testDistributionMidChainCannotReadEarlierMessagesWhichAreMessageKeyUnavailable() throws {
        var (sender, _) = try Support.chainAndReceiver(seed: 31)
        let early = try sender.encrypt(plaintext(0))
        let alsoEarly = try sender.encrypt(plaintext(1))
        var receiver = SenderKeyReceiverState()
        try receiver.processDistribution(try sender.distributionMessage().serialized, for: group)
        let later = try sender.encrypt(plaintext(2))
        assertRejects(early, by: &receiver, with: .messageKeyUnavailable)
        assertRejects(alsoEarly, by: &receiver, with: .messageKeyUnavailable)
        XCTAssertEqual(try open(later, &receiver), plaintext(2))
        assertRejects(later, by: &receiver, with: .duplicateMessage)
        assertRejects(early, by: &receiver, with: .messageKeyUnavailable)      // still unavailable, not a duplicate
        // A replayed distribution of the same chain at iteration 0 does not move the start back.
        var fresh = try Support.chainAndReceiver(seed: 31).0
        try receiver.processDistribution(try fresh.distributionMessage().serialized, for: group)
        assertRejects(try fresh.encrypt(plaintext(0)), by: &receiver, with: .messageKeyUnavailable)
    }

    func testADistributionForAnotherGroupIsRefused() throws {
        let (sender, _) = try Support.chainAndReceiver(seed: 32)
        let distribution = try sender.distributionMessage().serialized
        var receiver = SenderKeyReceiverState()
        XCTAssertThrowsError(try receiver.processDistribution(distribution, for: groupID("another group"))) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage)
        }
        XCTAssertEqual(receiver.chainIDs, [])
        // The group is compared as bytes: a prefix or an extension of the id is another group.
        for other in ["test grou", "test group ", "Test group"] {
            XCTAssertThrowsError(try receiver.processDistribution(distribution, for: groupID(other)), other) {
                XCTAssertEqual($0 as? SessionError, .invalidMessage, other)
            }
        }
        try receiver.processDistribution(distribution, for: group)
        XCTAssertEqual(receiver.chainIDs, [sender.chainID])
    }

    func testDistributionWithInvalidSigningKeyIsRejected() throws {
        let (sender, _) = try Support.chainAndReceiver(seed: 33)
        let genuine = try sender.distributionMessage().serialized
        let p: [UInt8] = [0xed] + [UInt8](repeating: 0xff, count: 30) + [0x7f]     // 2^255 − 19: y = p, not canonical
        let badKeys: [[UInt8]] = [
            [1] + [UInt8](repeating: 0, count: 31),                               // the identity (small order)
            [UInt8](repeating: 0, count: 32),                                     // y = 0: order 4
            [0xec] + [UInt8](repeating: 0xff, count: 30) + [0x7f],                 // y = −1: order 2
            p,
            [0x02] + [UInt8](repeating: 0, count: 31),                             // y = 2: not on the curve
            // y = 1 with the sign bit set: not canonical.
            [1] + [UInt8](repeating: 0, count: 30) + [0x80],
            // A point of order 8 (torsion): valid encoding, not in the prime-order subgroup.
            Hex.decode("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a") ?? [],
        ]
        var receiver = SenderKeyReceiverState()
        for key in badKeys {
            XCTAssertThrowsError(try receiver.processDistribution(Array(genuine.dropLast(32)) + key, for: group)) {
                XCTAssertEqual($0 as? SessionError, .invalidKey, "key \(Hex.encode(key))")
            }
            // The group is checked before the key.
            XCTAssertThrowsError(try receiver.processDistribution(Array(genuine.dropLast(32)) + key, for: groupID("other"))) {
                XCTAssertEqual($0 as? SessionError, .invalidMessage, "key \(Hex.encode(key))")
            }
        }
        XCTAssertEqual(receiver.chainIDs, [])
    }

    func testMalformedDistributionIsRejectedByTypeThenLength() throws {
        let (sender, _) = try Support.chainAndReceiver(seed: 34)
        let genuine = try sender.distributionMessage().serialized
        var receiver = SenderKeyReceiverState()
        let cases: [([UInt8], SessionError, String)] = [
            ([], .invalidMessage, "empty"),
            ([0x10] + genuine.dropFirst(), .unsupportedVersion, "version 1's type byte"),
            ([0x00], .unsupportedVersion, "unknown type byte"),
            (Array(genuine.dropLast()), .invalidMessage, "one byte short"),
            (genuine + [0], .invalidMessage, "one byte long"),
            ([0x23], .invalidMessage, "type byte only"),
            (replacing(genuine, at: 1, with: [0]), .invalidMessage, "an empty group id"),
            (replacing(genuine, at: 1, with: [11]), .invalidMessage, "a group length that disagrees with the length"),
        ]
        for (bytes, expected, why) in cases {
            XCTAssertThrowsError(try receiver.processDistribution(bytes, for: group), why) {
                XCTAssertEqual($0 as? SessionError, expected, why)
            }
        }
        XCTAssertEqual(receiver.chainIDs, [])
        try receiver.processDistribution(genuine, for: group)
        XCTAssertEqual(receiver.chainIDs, [sender.chainID])
    }

    func testAuthenticPlaintextWithoutValidPaddingIsInvalidPadding() throws {
        var generator = SplitMix64(seed: 35)
        let signing = try Ed25519.PrivateKey(seed: Support.bytes(32, using: &generator))
        let initial = Support.bytes(32, using: &generator)
        let sender = try SenderKeySendingChain(group: group, sender: member, initialChainKey: initial, signingKey: signing)
        let badPaddings: [[UInt8]] = [[], [0x01, 0, 0], [0x00, 0, 0, 0, 0], [0x02] + [UInt8](repeating: 0, count: 63),
                                      [0x01] + [UInt8](repeating: 0, count: 59) + [0, 0, 0, 60]]
        for padded in badPaddings {
            var receiver = SenderKeyReceiverState()
            try receiver.processDistribution(try sender.distributionMessage().serialized, for: group)
            let message = try Support.senderKeyMessage(chainKeyAtIteration: initial, iteration: 0, chainID: SHA256.hash(initial),
                                                       padded: padded, signingKey: signing)
            assertRejects(message, by: &receiver, with: .invalidPadding)
        }
    }

    func testTamperedCiphertextWithValidSignatureIsInvalidMessage() throws {
        // Only the chain's signer can produce this: a correctly signed message whose commitment
        // or tag is wrong.
        var generator = SplitMix64(seed: 36)
        let signing = try Ed25519.PrivateKey(seed: Support.bytes(32, using: &generator))
        let initial = Support.bytes(32, using: &generator)
        let sender = try SenderKeySendingChain(group: group, sender: member, initialChainKey: initial, signingKey: signing)
        var receiver = SenderKeyReceiverState()
        try receiver.processDistribution(try sender.distributionMessage().serialized, for: group)
        var copy = sender
        let genuine = try copy.encrypt(plaintext(0))
        let context = Support.encodeGroup("test group") + encodeAddress("sender", 3)
        for position in [40, 80, genuine.count - 65] {      // the commitment, the ciphertext, the tag
            var body = Array(genuine.dropLast(64))
            body[position] ^= 0x01
            assertRejects(body + signing.signature(for: context + body), by: &receiver, with: .invalidMessage)
        }
        XCTAssertEqual(try open(genuine, &receiver), plaintext(0))
    }

    func testLastIterationIsUsedOnceThenChainIsExhausted() throws {
        // A chain just before its last iteration, loaded through the documented version-2 blob
        // layout: Encode(group) || Encode(sender) || chain_id || u64(iteration) || chain_key || signing_seed.
        var generator = SplitMix64(seed: 37)
        let key = Support.bytes(32, using: &generator)
        let seed = Support.bytes(32, using: &generator)
        let id = Support.bytes(32, using: &generator)
        var writer = StateWriter(kind: .senderKeySender, version: 2)
        writer.writeFixed(Support.encodeGroup("test group"))
        writer.writeFixed(encodeAddress("sender", 3))
        writer.writeFixed(id)
        writer.write(UInt64(UInt32.max))
        writer.writeFixed(key)
        writer.writeFixed(seed)
        var sender = try SenderKeySendingChain(serialized: writer.finish())
        XCTAssertFalse(sender.isExhausted)
        XCTAssertEqual(sender.group, group)
        XCTAssertEqual(sender.sender, member)

        var receiver = SenderKeyReceiverState()
        let distribution = try sender.distributionMessage()
        XCTAssertEqual(distribution.iteration, UInt32.max)
        try receiver.process(distribution, for: group)
        let last = try sender.encrypt(plaintext(0))
        XCTAssertEqual(Array(last[33 ..< 37]), [0xff, 0xff, 0xff, 0xff])
        XCTAssertTrue(sender.isExhausted)
        XCTAssertEqual(sender.iteration, 1 << 32)
        let exhausted = sender.serialized()
        XCTAssertThrowsError(try sender.encrypt(plaintext(1))) { XCTAssertEqual($0 as? SessionError, .chainExhausted) }
        XCTAssertThrowsError(try sender.distributionMessage()) { XCTAssertEqual($0 as? SessionError, .chainExhausted) }
        XCTAssertEqual(sender.serialized(), exhausted)
        XCTAssertEqual(try SenderKeySendingChain(serialized: exhausted).iteration, 1 << 32)

        XCTAssertEqual(try open(last, &receiver), plaintext(0))
        XCTAssertEqual(receiver.iteration(of: sender.chainID), 1 << 32)
        assertRejects(last, by: &receiver, with: .duplicateMessage)
        XCTAssertEqual(try SenderKeyReceiverState(serialized: receiver.serialized()).serialized(), receiver.serialized())
    }

    func testSecretsAreRedactedFromDescriptions() throws {
        let (sender, receiver) = try Support.chainAndReceiver(seed: 38)
        let distribution = try sender.distributionMessage()
        let keyHex = Hex.encode(distribution.serialized[48 ..< 80])
        for text in [String(describing: sender), String(reflecting: sender), String(describing: distribution),
                     String(describing: receiver), String(reflecting: receiver)] {
            XCTAssertFalse(text.contains(keyHex), text)
        }
    }
}
