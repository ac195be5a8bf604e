import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Sender-key states survive a save and restore, and load strictly.
final class SenderKeyPersistenceTests: XCTestCase {
    private typealias Support = GroupTestSupport

    private func plaintext(_ index: Int) -> [UInt8] { Array("message \(index)".utf8) }

    private let group = GroupTestSupport.group
    private let member = GroupTestSupport.sender

    private func assertLoadFails<T>(_ expected: SessionError, _ load: @autoclosure () throws -> T,
                                    file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try load(), file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, file: file, line: line)
        }
    }

    /// A receiver in the middle of a conversation: two chains, skipped keys on both.
    private func receiverMidStream() throws -> (SenderKeyReceiverState, [SenderKeySendingChain]) {
        var (first, receiver) = try Support.chainAndReceiver(seed: 40)
        var (second, _) = try Support.chainAndReceiver(seed: 41)
        try receiver.processDistribution(try second.distributionMessage().serialized, for: group)
        for index in 0 ..< 6 { _ = try first.encrypt(plaintext(index)) }
        _ = try receiver.decrypt(try first.encrypt(plaintext(6)), for: group, from: member)
        _ = try second.encrypt(plaintext(0))
        _ = try receiver.decrypt(try second.encrypt(plaintext(1)), for: group, from: member)
        return (receiver, [first, second])
    }

    func testSendingChainRestoredMidStreamContinuesIdentically() throws {
        var (sender, receiver) = try Support.chainAndReceiver(seed: 42)
        for index in 0 ..< 5 {
            XCTAssertEqual(try receiver.decrypt(try sender.encrypt(plaintext(index)), for: group, from: member), plaintext(index))
        }
        var restored = try SenderKeySendingChain(serialized: sender.serialized())
        XCTAssertEqual(restored.chainID, sender.chainID)
        XCTAssertEqual(restored.group, group)
        XCTAssertEqual(restored.sender, member)
        XCTAssertEqual(restored.iteration, 5)
        XCTAssertEqual(restored.signingPublicKey, sender.signingPublicKey)
        // Ed25519 is deterministic: both copies produce the same bytes, which the receiver reads.
        let fromRestored = try restored.encrypt(plaintext(5))
        XCTAssertEqual(fromRestored, try sender.encrypt(plaintext(5)))
        XCTAssertEqual(try receiver.decrypt(fromRestored, for: group, from: member), plaintext(5))
    }

    func testReceiverRestoredMidStreamKeepsChainsAndSkippedKeys() throws {
        var (receiver, chains) = try receiverMidStream()
        var restored = try SenderKeyReceiverState(serialized: receiver.serialized())
        XCTAssertEqual(restored.serialized(), receiver.serialized())
        XCTAssertEqual(restored.chainIDs, chains.map(\.chainID))
        XCTAssertEqual(restored.skippedKeyCount(of: chains[0].chainID), 6)
        XCTAssertEqual(restored.skippedKeyCount(of: chains[1].chainID), 1)
        // The same chains rebuilt from their seeds give the same messages: skipped ones open once.
        var freshChains = try [UInt64(40), 41].map { try Support.chainAndReceiver(seed: $0).0 }
        let firstMessages = try (0 ..< 8).map { try freshChains[0].encrypt(plaintext($0)) }
        for index in [5, 0, 3] { XCTAssertEqual(try restored.decrypt(firstMessages[index], for: group, from: member), plaintext(index)) }
        XCTAssertThrowsError(try restored.decrypt(firstMessages[6], for: group, from: member)) {
            XCTAssertEqual($0 as? SessionError, .duplicateMessage)
        }
        XCTAssertEqual(try restored.decrypt(firstMessages[7], for: group, from: member), plaintext(7))
        XCTAssertEqual(try restored.decrypt(try freshChains[1].encrypt(plaintext(0)), for: group, from: member), plaintext(0))
        // The original, untouched by the copy's progress, still reads the same messages.
        XCTAssertEqual(try receiver.decrypt(firstMessages[5], for: group, from: member), plaintext(5))
        XCTAssertEqual(try SenderKeyReceiverState(serialized: SenderKeyReceiverState().serialized()).chainIDs, [])
    }

    func testEveryTruncationOrSingleByteChangeOfABlobFails() throws {
        let (receiver, chains) = try receiverMidStream()
        let blobs: [(blob: [UInt8], load: ([UInt8]) throws -> Void)] = [
            (receiver.serialized(), { _ = try SenderKeyReceiverState(serialized: $0) }),
            (chains[0].serialized(), { _ = try SenderKeySendingChain(serialized: $0) }),
        ]
        for (blob, load) in blobs {
            XCTAssertNoThrow(try load(blob))
            for length in 0 ..< blob.count {
                XCTAssertThrowsError(try load(Array(blob.prefix(length)))) { XCTAssertEqual($0 as? SessionError, .invalidPayload) }
            }
            XCTAssertThrowsError(try load(blob + [0])) { XCTAssertEqual($0 as? SessionError, .invalidPayload) }
            for position in blob.indices {
                var altered = blob
                altered[position] ^= 0x20
                XCTAssertThrowsError(try load(altered), "byte \(position)") {
                    XCTAssertEqual($0 as? SessionError, .invalidPayload, "byte \(position)")
                }
            }
        }
    }

    func testBlobsOfAnotherKindOrVersionAreRejected() throws {
        let (receiver, chains) = try receiverMidStream()
        assertLoadFails(.invalidPayload, try SenderKeyReceiverState(serialized: chains[0].serialized()))
        assertLoadFails(.invalidPayload, try SenderKeySendingChain(serialized: receiver.serialized()))
        // Version 1 (chains without a group or sender) is unsupported like any unknown version.
        for version: UInt8 in [0, 1, 4, 0xff] {
            var sender = StateWriter(kind: .senderKeySender, version: version)
            sender.writeFixed(GroupTestSupport.encodeGroup("g") + encodeAddress("a", 1) + [UInt8](repeating: 1, count: 32 + 8 + 32 + 32))
            assertLoadFails(.unsupportedVersion, try SenderKeySendingChain(serialized: sender.finish()))
            var other = StateWriter(kind: .senderKeyReceiver, version: version)
            other.write(UInt32(0))
            assertLoadFails(.unsupportedVersion, try SenderKeyReceiverState(serialized: other.finish()))
        }
    }

    // MARK: Well-formed envelopes with invalid contents

    private let validSigningKey = (try? Ed25519.PrivateKey(seed: [UInt8](repeating: 3, count: 32)).publicKey.rawRepresentation) ?? []

    /// A receiver blob (version-2 layout: per chain, chain_id || u32(start) || u64(iteration) ||
    /// chain_key || signing_pk || u32(skipped count) || skipped keys) with one chain per entry
    /// of `chains` (id byte, iteration, skipped iterations), each starting at `start`.
    private func receiverBlob(chains: [(id: UInt8, iteration: UInt64, skipped: [UInt32])], count: UInt32? = nil, start: UInt32 = 0,
                              signingKey: [UInt8]? = nil, trailing: [UInt8] = []) -> [UInt8] {
        var writer = StateWriter(kind: .senderKeyReceiver, version: 2)
        writer.write(count ?? UInt32(chains.count))
        for chain in chains {
            writer.writeFixed([UInt8](repeating: chain.id, count: 32))
            writer.write(start)
            writer.write(chain.iteration)
            writer.writeFixed([UInt8](repeating: 0xaa, count: 32))
            writer.writeFixed(signingKey ?? validSigningKey)
            writer.write(UInt32(chain.skipped.count))
            for iteration in chain.skipped {
                writer.write(iteration)
                writer.writeFixed([UInt8](repeating: 0xbb, count: 32))
            }
        }
        writer.writeFixed(trailing)
        return writer.finish()
    }

    func testReceiverBlobWithInvalidContentsIsRejected() throws {
        XCTAssertEqual(try SenderKeyReceiverState(serialized: receiverBlob(chains: [(1, 10, [2, 5, 9]), (2, 1 << 32, [])])).chainIDs.count, 2)
        let invalid: [(String, [UInt8])] = [
            ("six chains", receiverBlob(chains: (1 ... 6).map { (UInt8($0), 0, []) })),
            ("a repeated chain id", receiverBlob(chains: [(1, 0, []), (1, 0, [])])),
            ("an iteration above 2^32", receiverBlob(chains: [(1, (1 << 32) + 1, [])])),
            ("skipped keys out of order", receiverBlob(chains: [(1, 10, [5, 2])])),
            ("a repeated skipped key", receiverBlob(chains: [(1, 10, [5, 5])])),
            ("a skipped key at the chain's iteration", receiverBlob(chains: [(1, 10, [10])])),
            ("more chains announced than present", receiverBlob(chains: [(1, 0, [])], count: 2)),
            ("trailing bytes", receiverBlob(chains: [(1, 0, [])], trailing: [0])),
            ("an invalid signing key", receiverBlob(chains: [(1, 0, [])], signingKey: [1] + [UInt8](repeating: 0, count: 31))),
            ("more than 2000 skipped keys", receiverBlob(chains: [(1, 3000, (0 ..< 2001).map { UInt32($0) })])),
            ("an iteration below the start", receiverBlob(chains: [(1, 4, [])], start: 5)),
            ("a skipped key below the start", receiverBlob(chains: [(1, 10, [4, 6])], start: 5)),
        ]
        // A chain that started mid-stream keeps its start: a message below it is unavailable.
        XCTAssertNoThrow(try SenderKeyReceiverState(serialized: receiverBlob(chains: [(1, 10, [5, 9])], start: 5)))
        for (what, blob) in invalid {
            XCTAssertThrowsError(try SenderKeyReceiverState(serialized: blob), what) {
                XCTAssertEqual($0 as? SessionError, .invalidPayload, what)
            }
        }
    }

    func testSenderBlobWithInvalidContentsIsRejected() throws {
        // Version-2 layout: Encode(group) || Encode(sender) || chain_id || u64(iteration) || chain_key || signing_seed.
        func blob(iteration: UInt64, group: [UInt8] = GroupTestSupport.encodeGroup("g"), sender: [UInt8] = encodeAddress("a", 1),
                  trailing: [UInt8] = []) -> [UInt8] {
            var writer = StateWriter(kind: .senderKeySender, version: 2)
            writer.writeFixed(group)
            writer.writeFixed(sender)
            writer.writeFixed([UInt8](repeating: 1, count: 32))
            writer.write(iteration)
            writer.writeFixed([UInt8](repeating: 2, count: 32))
            writer.writeFixed([UInt8](repeating: 3, count: 32))
            writer.writeFixed(trailing)
            return writer.finish()
        }
        XCTAssertEqual(try SenderKeySendingChain(serialized: blob(iteration: 1 << 32)).isExhausted, true)
        assertLoadFails(.invalidPayload, try SenderKeySendingChain(serialized: blob(iteration: (1 << 32) + 1)))
        assertLoadFails(.invalidPayload, try SenderKeySendingChain(serialized: blob(iteration: .max)))
        assertLoadFails(.invalidPayload, try SenderKeySendingChain(serialized: blob(iteration: 0, trailing: [0])))
        let loaded = try SenderKeySendingChain(serialized: blob(iteration: 3))
        XCTAssertEqual(loaded.group, groupID("g"))
        XCTAssertEqual(loaded.sender, address("a", 1))
        assertLoadFails(.invalidPayload, try SenderKeySendingChain(serialized: blob(iteration: 0, group: [0])))
        assertLoadFails(.invalidPayload, try SenderKeySendingChain(serialized: blob(iteration: 0, sender: [0, 0, 0, 0, 1])))
        assertLoadFails(.invalidPayload, try SenderKeySendingChain(serialized: blob(iteration: 0, sender: [1, 0xFF, 0, 0, 0, 1])))
    }
}
