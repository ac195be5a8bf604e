import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// A group of five members, each sending, with random delivery schedules: messages are
/// shuffled, dropped, duplicated and corrupted, and members rotate their chains now and then.
/// A model of SPEC §5's receiver rules predicts every outcome; the property is that every
/// genuine message decrypts exactly once per receiver that gets it, every other delivery
/// fails with the predicted error, and a failure leaves the receiver's serialized state
/// byte for byte as it was.
final class GroupDeliveryPropertyTests: XCTestCase {
    private typealias Support = GroupTestSupport

    /// One message as sent.
    private struct Sent {
        let sender: Int
        let chainID: SenderChainID
        let iteration: UInt32
        let plaintext: [UInt8]
        let bytes: [UInt8]
    }

    /// One delivery waiting in a receiver's queue.
    private enum Delivery {
        /// The genuine bytes of sent message `index`.
        case genuine(index: Int)
        /// Bytes that must fail; `chainID` is the chain the receiver must hold for `ifHeld` to
        /// apply, otherwise the lookup fails first with `unknownChain`.
        case bad(bytes: [UInt8], sender: Int, chainID: SenderChainID?, ifHeld: SessionError)
        /// Bytes properly signed with the chain's own key (a malicious member) whose AEAD part
        /// does not open at `iteration`: the iteration rules decide first, then `invalidMessage`.
        case resigned(bytes: [UInt8], sender: Int, chainID: SenderChainID, iteration: UInt32)
    }

    /// SPEC §5's receiver rules for one chain, as an independent model.
    private struct ChainModel {
        /// The iteration the receiver's copy started at (the distribution's).
        let start: UInt32
        var next: UInt64
        var skipped: [UInt32] = []     // ascending, oldest first

        init(start: UInt32) {
            self.start = start
            next = UInt64(start)
        }

        /// Applies a genuine message at `iteration`: the new model, or the error it must raise.
        func receiving(_ iteration: UInt32) -> Result<ChainModel, SessionError> {
            var model = self
            if UInt64(iteration) < next {
                guard let index = skipped.firstIndex(of: iteration) else {
                    return .failure(iteration < start ? .messageKeyUnavailable : .duplicateMessage)
                }
                model.skipped.remove(at: index)
                return .success(model)
            }
            guard UInt64(iteration) - next <= 256 else { return .failure(.tooManySkippedMessages) }
            while model.next < UInt64(iteration) {
                model.skipped.append(UInt32(model.next))
                model.next += 1
            }
            if model.skipped.count > 2000 { model.skipped.removeFirst(model.skipped.count - 2000) }
            model.next += 1
            return .success(model)
        }
    }

    /// What one receiver holds from each sender, per the model: chains oldest first, at most five.
    private struct ReceiverModel {
        var chains: [Int: [(id: SenderChainID, model: ChainModel)]] = [:]

        mutating func add(chain id: SenderChainID, at iteration: UInt32, from sender: Int) {
            var list = chains[sender, default: []]
            guard !list.contains(where: { $0.id == id }) else { return }
            list.append((id, ChainModel(start: iteration)))
            if list.count > 5 { list.removeFirst(list.count - 5) }
            chains[sender] = list
        }

        func holds(_ id: SenderChainID, from sender: Int) -> Bool {
            chains[sender]?.contains { $0.id == id } ?? false
        }
    }

    private func snapshot(_ session: GroupSession) -> [UInt8] {
        var bytes = session.sendingChain.serialized()
        for address in session.receiverStates.keys.sorted(by: { $0.description < $1.description }) {
            bytes += Array(address.description.utf8)
            bytes += session.receiverStates[address]?.serialized() ?? []
        }
        return bytes
    }

    func testRandomDeliverySchedulesInAGroupOfFive() throws {
        let memberCount = 5
        let messageCount = 10_000
        var rng = SplitMix64(seed: 0x5EED_6A0F)
        let keySource = SeededRandomSource(seed: 0xC4A1_7E57)
        let group = groupID("property group")
        let addresses = (0 ..< memberCount).map { address("member-\($0)", UInt32($0 + 1)) }
        /// Encode(group) || Encode(sender): what every signature of a member's chain covers first.
        let contexts = (0 ..< memberCount).map {
            GroupTestSupport.encodeGroup("property group") + encodeAddress("member-\($0)", UInt32($0 + 1))
        }
        let intruder = try Ed25519.PrivateKey(seed: [UInt8](repeating: 0x66, count: 32))
        var outsider = try SenderKeySendingChain(group: group, sender: addresses[0], using: keySource)      // never distributed to anyone

        var sessions = try (0 ..< memberCount).map { try GroupSession(group: group, localAddress: addresses[$0], using: keySource) }
        var models = [ReceiverModel](repeating: ReceiverModel(), count: memberCount)
        func distribute(from sender: Int, _ distribution: SenderKeyDistributionMessage) throws {
            for receiver in 0 ..< memberCount where receiver != sender {
                try sessions[receiver].processDistribution(distribution.serialized, from: addresses[sender])
                models[receiver].add(chain: distribution.chainID, at: distribution.iteration, from: sender)
            }
        }
        for sender in 0 ..< memberCount { try distribute(from: sender, try sessions[sender].distributionMessage()) }

        var sent = [Sent]()
        var queues = [[Delivery]](repeating: [], count: memberCount)
        var dropped = [Set<Int>](repeating: [], count: memberCount)
        var decryptCounts = [[Int: Int]](repeating: [:], count: memberCount)
        var failures = 0
        var outcomes: [String: Int] = [:]

        func fail(_ text: String) {
            failures += 1
            if failures <= 20 { XCTFail(text) }
        }

        func corrupted(_ message: Sent, sameChain: [Sent]) -> Delivery {
            var bytes = message.bytes
            let id = message.chainID
            switch Int.random(in: 0 ..< 9, using: &rng) {
            case 0:
                bytes[0] ^= UInt8(1) << UInt8.random(in: 0 ..< 8, using: &rng)
                return .bad(bytes: bytes, sender: message.sender, chainID: nil, ifHeld: .unsupportedVersion)
            case 1:
                return .bad(bytes: Array(bytes.prefix(Int.random(in: 0 ..< 149, using: &rng))), sender: message.sender,
                            chainID: nil, ifHeld: .invalidMessage)
            case 2:
                bytes[Int.random(in: 1 ..< 33, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0 ..< 8, using: &rng)
                return .bad(bytes: bytes, sender: message.sender, chainID: nil, ifHeld: .unknownChain)
            case 3:
                bytes[Int.random(in: 33 ..< bytes.count, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0 ..< 8, using: &rng)
                return .bad(bytes: bytes, sender: message.sender, chainID: id, ifHeld: .invalidSignature)
            case 4:
                return .bad(bytes: Array(bytes.prefix(Int.random(in: 149 ..< bytes.count, using: &rng))), sender: message.sender,
                            chainID: id, ifHeld: .invalidSignature)
            case 5:
                let body = Array(bytes.dropLast(64))
                return .bad(bytes: body + intruder.signature(for: contexts[message.sender] + body), sender: message.sender, chainID: id,
                            ifHeld: .invalidSignature)
            case 7, 8:
                guard let signing = signers[id] else { return .bad(bytes: [], sender: message.sender, chainID: nil, ifHeld: .invalidMessage) }
                var iteration = message.iteration
                if Int.random(in: 0 ..< 2, using: &rng) == 0 {
                    // Flip a bit of the commitment, the ciphertext or the tag.
                    bytes[Int.random(in: 37 ..< bytes.count - 64, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0 ..< 8, using: &rng)
                } else {
                    // Claim another iteration near this one (the key, commitment and AAD no longer match).
                    let shifted = Int(message.iteration) + Int.random(in: -300 ... 300, using: &rng)
                    iteration = UInt32(clamping: max(0, shifted == Int(message.iteration) ? shifted + 1 : shifted))
                    let encoded = [UInt8(iteration >> 24), UInt8(truncatingIfNeeded: iteration >> 16),
                                   UInt8(truncatingIfNeeded: iteration >> 8), UInt8(truncatingIfNeeded: iteration)]
                    bytes.replaceSubrange(33 ..< 37, with: encoded)
                }
                let body = Array(bytes.dropLast(64))
                return .resigned(bytes: body + signing.signature(for: contexts[message.sender] + body), sender: message.sender,
                                 chainID: id, iteration: iteration)
            default:
                // The signature of another message of the same chain.
                guard let other = sameChain.last(where: { $0.iteration != message.iteration }) else {
                    return .bad(bytes: [], sender: message.sender, chainID: nil, ifHeld: .invalidMessage)
                }
                return .bad(bytes: Array(bytes.dropLast(64)) + other.bytes.suffix(64), sender: message.sender,
                            chainID: id, ifHeld: .invalidSignature)
            }
        }

        func deliver(_ delivery: Delivery, to receiver: Int) {
            switch delivery {
            case let .genuine(index):
                let message = sent[index]
                guard let list = models[receiver].chains[message.sender],
                      let position = list.firstIndex(where: { $0.id == message.chainID }) else {
                    expectFailure(message.bytes, from: message.sender, to: receiver, error: .unknownChain)
                    return
                }
                switch list[position].model.receiving(message.iteration) {
                case let .failure(error):
                    expectFailure(message.bytes, from: message.sender, to: receiver, error: error)
                case let .success(next):
                    do {
                        let plaintext = try sessions[receiver].decrypt(message.bytes, from: addresses[message.sender])
                        if plaintext != message.plaintext { fail("message \(index) to \(receiver): wrong plaintext") }
                        decryptCounts[receiver][index, default: 0] += 1
                        models[receiver].chains[message.sender]?[position].model = next
                        outcomes["decrypted", default: 0] += 1
                    } catch {
                        fail("message \(index) (iteration \(message.iteration)) to \(receiver): \(error), expected success")
                    }
                }
            case let .resigned(bytes, sender, chainID, iteration):
                guard let model = models[receiver].chains[sender]?.first(where: { $0.id == chainID })?.model else {
                    expectFailure(bytes, from: sender, to: receiver, error: .unknownChain)
                    return
                }
                switch model.receiving(iteration) {
                case let .failure(error): expectFailure(bytes, from: sender, to: receiver, error: error)
                case .success: expectFailure(bytes, from: sender, to: receiver, error: .invalidMessage)
                }
            case let .bad(bytes, sender, chainID, ifHeld):
                let expected: SessionError
                if let chainID, !models[receiver].holds(chainID, from: sender) { expected = .unknownChain } else { expected = ifHeld }
                expectFailure(bytes, from: sender, to: receiver, error: expected)
            }
        }

        func expectFailure(_ bytes: [UInt8], from sender: Int, to receiver: Int, error expected: SessionError) {
            let before = snapshot(sessions[receiver])
            do {
                _ = try sessions[receiver].decrypt(bytes, from: addresses[sender])
                fail("delivery to \(receiver) succeeded, expected \(expected)")
            } catch {
                if error != expected { fail("delivery to \(receiver): \(error), expected \(expected)") }
            }
            if snapshot(sessions[receiver]) != before { fail("a failed delivery (\(expected)) changed receiver \(receiver)'s state") }
            outcomes["\(expected)", default: 0] += 1
        }

        func deliverRandom(from receiver: Int) {
            let pick = Int.random(in: 0 ..< queues[receiver].count, using: &rng)
            queues[receiver].swapAt(pick, queues[receiver].count - 1)
            guard let delivery = queues[receiver].popLast() else { return }
            deliver(delivery, to: receiver)
        }

        var sentByChain: [SenderChainID: [Sent]] = [:]
        var signers: [SenderChainID: Ed25519.PrivateKey] = [:]
        /// The signing key of a member's current chain, read from the documented version-2 blob
        /// layout (6-byte envelope header, Encode(group), Encode(sender), chain id, u64 iteration,
        /// chain key, then the signing seed).
        func signer(of sender: Int) throws -> Ed25519.PrivateKey {
            let blob = sessions[sender].sendingChain.serialized()
            let seedStart = 6 + contexts[sender].count + 32 + 8 + 32
            return try Ed25519.PrivateKey(seed: Array(blob[seedStart ..< seedStart + 32]))
        }
        for index in 0 ..< messageCount {
            let sender = Int.random(in: 0 ..< memberCount, using: &rng)
            if Int.random(in: 0 ..< 500, using: &rng) == 0 {
                try distribute(from: sender, try sessions[sender].rotateSendingChain(using: keySource))
            }
            let plaintext = Array("\(index) from \(sender): ".utf8) + Support.bytes(Int.random(in: 0 ..< 80, using: &rng), using: &rng)
            let chain = sessions[sender].sendingChain
            if signers[chain.chainID] == nil { signers[chain.chainID] = try signer(of: sender) }
            let message = Sent(sender: sender, chainID: chain.chainID, iteration: UInt32(chain.iteration),
                               plaintext: plaintext, bytes: try sessions[sender].encrypt(plaintext))
            sent.append(message)
            sentByChain[message.chainID, default: []].append(message)

            for receiver in 0 ..< memberCount where receiver != sender {
                let fate = Int.random(in: 0 ..< 100, using: &rng)
                if fate < 4 {
                    dropped[receiver].insert(index)
                } else {
                    queues[receiver].append(.genuine(index: index))
                    if fate < 12 { queues[receiver].append(.genuine(index: index)) }
                }
                if Int.random(in: 0 ..< 10, using: &rng) == 0 {
                    queues[receiver].append(corrupted(message, sameChain: sentByChain[message.chainID] ?? []))
                }
                if Int.random(in: 0 ..< 100, using: &rng) == 0 {
                    queues[receiver].append(.bad(bytes: try outsider.encrypt([1]), sender: sender, chainID: nil, ifHeld: .unknownChain))
                }
                let window = Int.random(in: 8 ..< 64, using: &rng)
                while queues[receiver].count > window { deliverRandom(from: receiver) }
            }
        }
        for receiver in 0 ..< memberCount {
            while !queues[receiver].isEmpty { deliverRandom(from: receiver) }
        }

        // Every genuine message decrypted exactly once at every receiver that got it.
        for (index, message) in sent.enumerated() {
            for receiver in 0 ..< memberCount where receiver != message.sender {
                let expected = dropped[receiver].contains(index) ? 0 : 1
                let actual = decryptCounts[receiver][index] ?? 0
                if actual != expected { fail("message \(index) decrypted \(actual) times at receiver \(receiver), expected \(expected)") }
            }
        }
        XCTAssertEqual(failures, 0)
        XCTAssertEqual(sent.count, messageCount)
        // The schedule exercised every kind of outcome.
        for kind in ["decrypted", "duplicateMessage", "unsupportedVersion", "invalidMessage", "unknownChain", "invalidSignature",
                     "tooManySkippedMessages"] {
            XCTAssertGreaterThan(outcomes[kind] ?? 0, 0, kind)
        }
        print("group of \(memberCount), \(messageCount) messages: \(outcomes.sorted { $0.key < $1.key })")
    }
}
