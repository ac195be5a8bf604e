import SignalPrimitives
import XCTest
@testable import SessionKit

/// SPEC §5 behaviour of one sender's chain as a receiver sees it.
final class SenderKeyTests: XCTestCase {
    private typealias Support = GroupTestSupport

    /// Asserts that `body` throws `expected` and leaves `receiver`'s serialized state unchanged.
    private func assertRejects(
        _ message: [UInt8], by receiver: inout SenderKeyReceiverState, with expected: SessionError,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let before = receiver.serialized()
        XCTAssertThrowsError(try receiver.decrypt(message), file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, file: file, line: line)
        }
        XCTAssertEqual(receiver.serialized(), before, "a failed decryption changed the state", file: file, line: line)
    }

    private func plaintext(_ index: Int) -> [UInt8] { Array("message \(index)".utf8) }

    func testMessagesDecryptInOrder() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 1)
        for index in 0 ..< 20 {
            let message = try sender.encrypt(plaintext(index))
            XCTAssertEqual(try receiver.decrypt(message), plaintext(index))
        }
        XCTAssertEqual(receiver.iteration(of: sender.chainID), 20)
        XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), 0)
    }

    func testMessageCarriesHeaderAndSignatureOfSpecSection5() throws {
        var (sender, _) = try Support.chainAndReceiver(seed: 2, iteration: 7)
        let message = try sender.encrypt([1, 2, 3])
        XCTAssertEqual(message[0], 0x11)
        XCTAssertEqual(Array(message[1 ..< 33]), sender.chainID.rawRepresentation)
        XCTAssertEqual(Array(message[33 ..< 37]), [0, 0, 0, 7])
        // 37-byte header, 64-byte padded plaintext, 16-byte tag, 64-byte signature.
        XCTAssertEqual(message.count, 37 + 64 + 16 + 64)
        XCTAssertTrue(sender.signingPublicKey.isValidSignature(Array(message.suffix(64)), for: Array(message.dropLast(64))))
        XCTAssertEqual(sender.iteration, 8)
    }

    func testChainIDIsSHA256OfTheInitialChainKey() throws {
        let initial = [UInt8](repeating: 0x42, count: 32)
        let chain = try SenderKeySendingChain(initialChainKey: initial, signingKey: Ed25519.PrivateKey(seed: [UInt8](repeating: 1, count: 32)),
                                              iteration: 3)
        XCTAssertEqual(chain.chainID.rawRepresentation, SHA256.hash(initial))
        // The distribution carries the chain key at iteration 3: HMAC(ck, 0x02) applied three times.
        var expectedKey = initial
        for _ in 0 ..< 3 { expectedKey = HMACSHA256.authenticationCode(for: [0x02], using: expectedKey) }
        let distribution = try chain.distributionMessage().serialized
        XCTAssertEqual(distribution.count, 101)
        XCTAssertEqual(distribution[0], 0x10)
        XCTAssertEqual(Array(distribution[1 ..< 33]), SHA256.hash(initial))
        XCTAssertEqual(Array(distribution[33 ..< 37]), [0, 0, 0, 3])
        XCTAssertEqual(Array(distribution[37 ..< 69]), expectedKey)
        XCTAssertEqual(Array(distribution[69 ..< 101]), chain.signingPublicKey.rawRepresentation)
    }

    func testMessageMatchesTheSpecFormulasBuiltFromPrimitives() throws {
        var generator = SeededGenerator(seed: 3)
        let signing = try Ed25519.PrivateKey(seed: Support.bytes(32, using: &generator))
        let initial = Support.bytes(32, using: &generator)
        var sender = try SenderKeySendingChain(initialChainKey: initial, signingKey: signing, iteration: 1)
        let chainKeyAt1 = HMACSHA256.authenticationCode(for: [0x02], using: initial)
        let expected = try Support.senderKeyMessage(chainKeyAtIteration: chainKeyAt1, iteration: 1, chainID: SHA256.hash(initial),
                                                    padded: MessagePadding.pad([9, 9, 9]), signingKey: signing)
        XCTAssertEqual(try sender.encrypt([9, 9, 9]), expected)
    }

    func testOutOfOrderMessagesDecryptFromSkippedKeys() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 4)
        let messages = try (0 ..< 10).map { try sender.encrypt(plaintext($0)) }
        for index in [3, 0, 9, 1, 2, 8, 4, 7, 5, 6] {
            XCTAssertEqual(try receiver.decrypt(messages[index]), plaintext(index))
        }
        XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), 0)
        XCTAssertEqual(receiver.iteration(of: sender.chainID), 10)
    }

    func testReplayedMessageIsDuplicateAndChainStillWorks() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 5)
        let first = try sender.encrypt(plaintext(0))
        let second = try sender.encrypt(plaintext(1))
        let third = try sender.encrypt(plaintext(2))
        XCTAssertEqual(try receiver.decrypt(second), plaintext(1))
        assertRejects(second, by: &receiver, with: .duplicateMessage)        // replay of the current chain position
        XCTAssertEqual(try receiver.decrypt(first), plaintext(0))             // from its skipped key
        assertRejects(first, by: &receiver, with: .duplicateMessage)         // the skipped key is gone
        XCTAssertEqual(try receiver.decrypt(third), plaintext(2))
        XCTAssertEqual(try receiver.decrypt(try sender.encrypt(plaintext(3))), plaintext(3))
    }

    func testForgedSignatureIsRejected() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 6)
        let genuine = try sender.encrypt(plaintext(0))
        // The same bytes signed by another key.
        let intruder = try Ed25519.PrivateKey(seed: [UInt8](repeating: 7, count: 32))
        let body = Array(genuine.dropLast(64))
        assertRejects(body + intruder.signature(for: body), by: &receiver, with: .invalidSignature)
        // Any change to the signed bytes after the chain id, or to the signature.
        for position in [33, 36, 37, 80, genuine.count - 65, genuine.count - 64, genuine.count - 1] {
            var altered = genuine
            altered[position] ^= 0x01
            assertRejects(altered, by: &receiver, with: .invalidSignature)
        }
        assertRejects(Array(genuine.dropLast()), by: &receiver, with: .invalidSignature)
        XCTAssertEqual(try receiver.decrypt(genuine), plaintext(0))
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
        for type: UInt8 in [0x00, 0x01, 0x02, 0x10, 0x12, 0x20, 0xff] {
            assertRejects([type] + genuine.dropFirst(), by: &receiver, with: .unsupportedVersion)
            assertRejects([type], by: &receiver, with: .unsupportedVersion)
        }
        assertRejects([], by: &receiver, with: .invalidMessage)
        assertRejects([0x11], by: &receiver, with: .invalidMessage)
        // 1 + 32 + 4 + 16 + 64 = 117 bytes is the minimum: one less is short even for a known chain.
        assertRejects(Array(genuine.prefix(116)), by: &receiver, with: .invalidMessage)
        // 117 bytes with a known chain id passes the length check and fails the signature.
        assertRejects(Array(genuine.prefix(117)), by: &receiver, with: .invalidSignature)
        XCTAssertEqual(try receiver.decrypt(genuine), plaintext(0))
    }

    func testExactlyMaxSkipAheadDecryptsAndOneMoreIsRejected() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 11)
        let messages = try (0 ... 514).map { try sender.encrypt(plaintext($0)) }
        // The receiver is at iteration 0: iteration 257 is 257 ahead, 256 is exactly MAX_SKIP ahead.
        assertRejects(messages[257], by: &receiver, with: .tooManySkippedMessages)
        XCTAssertEqual(try receiver.decrypt(messages[256]), plaintext(256))
        XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), 256)
        // Now at 257: 514 is 257 ahead, 513 exactly 256.
        assertRejects(messages[514], by: &receiver, with: .tooManySkippedMessages)
        XCTAssertEqual(try receiver.decrypt(messages[513]), plaintext(513))
        XCTAssertEqual(try receiver.decrypt(messages[514]), plaintext(514))
        for index in [0, 255, 257, 512] { XCTAssertEqual(try receiver.decrypt(messages[index]), plaintext(index)) }
    }

    func testSkippedKeysBeyondMaxStoredEvictOldestFirst() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 12)
        let messages = try (0 ... 2048).map { try sender.encrypt(plaintext($0)) }
        // The first jump (to 256) stores 256 keys, each later one 255 (the message read is not
        // stored): 256 + 7 × 255 = 2041 after eight, so the oldest 41 (iterations 0 … 40) go.
        for jump in 1 ... 8 {
            XCTAssertEqual(try receiver.decrypt(messages[jump * 256]), plaintext(jump * 256))
            XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), min(256 + (jump - 1) * 255, 2000))
        }
        for evicted in [0, 1, 40] { assertRejects(messages[evicted], by: &receiver, with: .duplicateMessage) }
        for kept in [41, 42, 255, 257, 2047] { XCTAssertEqual(try receiver.decrypt(messages[kept]), plaintext(kept)) }
        XCTAssertEqual(receiver.skippedKeyCount(of: sender.chainID), 1995)
    }

    func testAtMostFiveChainsPerSenderOldestDropped() throws {
        var receiver = SenderKeyReceiverState()
        var chains = [SenderKeySendingChain]()
        for seed in 20 ..< 26 {
            let (chain, _) = try Support.chainAndReceiver(seed: UInt64(seed))
            chains.append(chain)
            try receiver.processDistribution(try chain.distributionMessage().serialized)
        }
        XCTAssertEqual(receiver.chainIDs, chains.dropFirst().map(\.chainID))
        assertRejects(try chains[0].encrypt(plaintext(0)), by: &receiver, with: .unknownChain)
        for index in 1 ..< 6 { XCTAssertEqual(try receiver.decrypt(try chains[index].encrypt(plaintext(index))), plaintext(index)) }
    }

    func testDistributionForAHeldChainIsIgnored() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 30)
        let original = try sender.distributionMessage().serialized
        let first = try sender.encrypt(plaintext(0))
        XCTAssertEqual(try receiver.decrypt(first), plaintext(0))
        let before = receiver.serialized()
        // Neither the old distribution nor a newer one resets or moves the chain.
        try receiver.processDistribution(original)
        try receiver.processDistribution(try sender.distributionMessage().serialized)
        XCTAssertEqual(receiver.serialized(), before)
        assertRejects(first, by: &receiver, with: .duplicateMessage)
    }

    func testDistributionMidChainCannotReadEarlierMessages() throws {
        var (sender, _) = try Support.chainAndReceiver(seed: 31)
        let early = try sender.encrypt(plaintext(0))
        var receiver = SenderKeyReceiverState()
        try receiver.processDistribution(try sender.distributionMessage().serialized)
        let later = try sender.encrypt(plaintext(1))
        assertRejects(early, by: &receiver, with: .duplicateMessage)
        XCTAssertEqual(try receiver.decrypt(later), plaintext(1))
    }

    func testDistributionWithInvalidSigningKeyIsRejected() throws {
        let (sender, _) = try Support.chainAndReceiver(seed: 32)
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
            XCTAssertThrowsError(try receiver.processDistribution(Array(genuine.prefix(69)) + key)) {
                XCTAssertEqual($0 as? SessionError, .invalidKey, "key \(Hex.encode(key))")
            }
        }
        XCTAssertEqual(receiver.chainIDs, [])
    }

    func testMalformedDistributionIsRejectedByTypeThenLength() throws {
        let (sender, _) = try Support.chainAndReceiver(seed: 33)
        let genuine = try sender.distributionMessage().serialized
        var receiver = SenderKeyReceiverState()
        let cases: [([UInt8], SessionError)] = [
            ([], .invalidMessage),
            ([0x11] + genuine.dropFirst(), .unsupportedVersion),
            ([0x00], .unsupportedVersion),
            (Array(genuine.prefix(100)), .invalidMessage),
            (genuine + [0], .invalidMessage),
            ([0x10], .invalidMessage),
        ]
        for (bytes, expected) in cases {
            XCTAssertThrowsError(try receiver.processDistribution(bytes)) { XCTAssertEqual($0 as? SessionError, expected) }
        }
        XCTAssertEqual(receiver.chainIDs, [])
        try receiver.processDistribution(genuine)
        XCTAssertEqual(receiver.chainIDs, [sender.chainID])
    }

    func testAuthenticPlaintextWithoutValidPaddingIsInvalidPadding() throws {
        var generator = SeededGenerator(seed: 34)
        let signing = try Ed25519.PrivateKey(seed: Support.bytes(32, using: &generator))
        let initial = Support.bytes(32, using: &generator)
        let sender = try SenderKeySendingChain(initialChainKey: initial, signingKey: signing)
        let badPaddings: [[UInt8]] = [[], [0x01, 0, 0], [0x00, 0, 0, 0, 0], [0x02] + [UInt8](repeating: 0, count: 63),
                                      [0x01] + [UInt8](repeating: 0, count: 59) + [0, 0, 0, 60]]
        for padded in badPaddings {
            var receiver = SenderKeyReceiverState()
            try receiver.processDistribution(try sender.distributionMessage().serialized)
            let message = try Support.senderKeyMessage(chainKeyAtIteration: initial, iteration: 0, chainID: SHA256.hash(initial),
                                                       padded: padded, signingKey: signing)
            assertRejects(message, by: &receiver, with: .invalidPadding)
        }
    }

    func testTamperedCiphertextWithValidSignatureIsInvalidMessage() throws {
        // Only the chain's signer can produce this: a correctly signed message whose tag is wrong.
        var generator = SeededGenerator(seed: 35)
        let signing = try Ed25519.PrivateKey(seed: Support.bytes(32, using: &generator))
        let initial = Support.bytes(32, using: &generator)
        let sender = try SenderKeySendingChain(initialChainKey: initial, signingKey: signing)
        var receiver = SenderKeyReceiverState()
        try receiver.processDistribution(try sender.distributionMessage().serialized)
        var copy = sender
        let genuine = try copy.encrypt(plaintext(0))
        var body = Array(genuine.dropLast(64))
        body[40] ^= 0x01
        assertRejects(body + signing.signature(for: body), by: &receiver, with: .invalidMessage)
        XCTAssertEqual(try receiver.decrypt(genuine), plaintext(0))
    }

    func testLastIterationIsUsedOnceThenChainIsExhausted() throws {
        // A chain just before its last iteration, loaded through the documented blob layout.
        var generator = SeededGenerator(seed: 36)
        let key = Support.bytes(32, using: &generator)
        let seed = Support.bytes(32, using: &generator)
        let id = Support.bytes(32, using: &generator)
        var writer = StateWriter(kind: .senderKeySender, version: 1)
        writer.writeFixed(id)
        writer.write(UInt64(UInt32.max))
        writer.writeFixed(key)
        writer.writeFixed(seed)
        var sender = try SenderKeySendingChain(serialized: writer.finish())
        XCTAssertFalse(sender.isExhausted)

        var receiver = SenderKeyReceiverState()
        let distribution = try sender.distributionMessage()
        XCTAssertEqual(distribution.iteration, UInt32.max)
        receiver.process(distribution)
        let last = try sender.encrypt(plaintext(0))
        XCTAssertEqual(Array(last[33 ..< 37]), [0xff, 0xff, 0xff, 0xff])
        XCTAssertTrue(sender.isExhausted)
        XCTAssertEqual(sender.iteration, 1 << 32)
        let exhausted = sender.serialized()
        XCTAssertThrowsError(try sender.encrypt(plaintext(1))) { XCTAssertEqual($0 as? SessionError, .chainExhausted) }
        XCTAssertThrowsError(try sender.distributionMessage()) { XCTAssertEqual($0 as? SessionError, .chainExhausted) }
        XCTAssertEqual(sender.serialized(), exhausted)
        XCTAssertEqual(try SenderKeySendingChain(serialized: exhausted).iteration, 1 << 32)

        XCTAssertEqual(try receiver.decrypt(last), plaintext(0))
        XCTAssertEqual(receiver.iteration(of: sender.chainID), 1 << 32)
        assertRejects(last, by: &receiver, with: .duplicateMessage)
        XCTAssertEqual(try SenderKeyReceiverState(serialized: receiver.serialized()).serialized(), receiver.serialized())
    }

    func testSecretsAreRedactedFromDescriptions() throws {
        let (sender, receiver) = try Support.chainAndReceiver(seed: 37)
        let distribution = try sender.distributionMessage()
        let keyHex = Hex.encode(distribution.serialized[37 ..< 69])
        for text in [String(describing: sender), String(reflecting: sender), String(describing: distribution),
                     String(describing: receiver), String(reflecting: receiver)] {
            XCTAssertFalse(text.contains(keyHex), text)
        }
    }
}
