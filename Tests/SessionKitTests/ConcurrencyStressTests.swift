import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Many concurrent tasks encrypting and decrypting between several devices through their
/// `SessionManager`s (per-peer serialisation), with stores that yield on every call to
/// provoke interleavings: nothing is lost, duplicated or reordered within a chain.
final class ConcurrencyStressTests: XCTestCase {
    /// Messages in flight from one device to another, in the order they were posted.
    actor Network {
        struct Message: Sendable {
            let bytes: [UInt8]
            let plaintext: [UInt8]
            let task: Int
            let sequence: Int
        }

        private var queues: [String: [Message]] = [:]

        static func key(_ from: ProtocolAddress, _ to: ProtocolAddress) -> String { "\(from)->\(to)" }

        func post(_ message: Message, from: ProtocolAddress, to: ProtocolAddress) {
            queues[Self.key(from, to), default: []].append(message)
        }

        /// The oldest message from `from` to `to`, removed, or nil.
        func take(from: ProtocolAddress, to: ProtocolAddress) -> Message? {
            let key = Self.key(from, to)
            guard var queue = queues[key], !queue.isEmpty else { return nil }
            let first = queue.removeFirst()
            queues[key] = queue
            return first
        }
    }

    struct Delivery: Sendable {
        let from: ProtocolAddress
        let to: ProtocolAddress
        let message: Network.Message
        let decrypted: [UInt8]
    }

    /// Four devices (two users with two devices each), every pair with a session in both
    /// directions (bundle, first message, reply).
    func mesh(seed: UInt64) async throws -> [TestDevice] {
        let server = FakeServer()
        var devices: [TestDevice] = []
        for user in 0 ..< 2 {
            // A user's devices share one identity key (a device with another key is refused).
            let identity = try IdentityKeyPair(using: SeededRandomSource(seed: seed &+ 0x1D + UInt64(user)))
            for device: UInt32 in 1 ... 2 {
                devices.append(try await TestDevice(
                    "user\(user)", device, seed: seed + UInt64(devices.count), server: server, identity: identity))
            }
        }
        for i in devices.indices {
            for j in devices.indices where i < j {
                try await devices[i].startSession(with: devices[j].address, server: server)
                let hello = try await devices[i].manager.encrypt(utf8("hello"), to: devices[j].address)
                _ = try await devices[j].manager.decrypt(hello, from: devices[i].address)
                let reply = try await devices[j].manager.encrypt(utf8("reply"), to: devices[i].address)
                _ = try await devices[i].manager.decrypt(reply, from: devices[j].address)
            }
        }
        for device in devices { await device.store.setYields(true) }
        return devices
    }

    func testAFullMeshOfConcurrentSendersAndReceiversLosesDuplicatesAndMixesUpNothing() async throws {
        let devices = try await mesh(seed: 900)
        let network = Network()
        let tasksPerPair = 4
        let messagesPerTask = 16
        let perPair = tasksPerPair * messagesPerTask

        let deliveries = try await withThrowingTaskGroup(of: [Delivery].self) { group in
            for sender in devices {
                for receiver in devices where receiver.address != sender.address {
                    // Several tasks encrypt to the same peer at once.
                    for task in 0 ..< tasksPerPair {
                        group.addTask {
                            for sequence in 0 ..< messagesPerTask {
                                let text = utf8("\(sender.address)>\(receiver.address) t\(task) #\(sequence)")
                                let bytes = try await sender.manager.encrypt(text, to: receiver.address)
                                await network.post(.init(bytes: bytes, plaintext: text, task: task, sequence: sequence),
                                                   from: sender.address, to: receiver.address)
                            }
                            return []
                        }
                    }
                    // One task receives from this sender, concurrently with everything else.
                    group.addTask {
                        var received: [Delivery] = []
                        while received.count < perPair {
                            guard let message = await network.take(from: sender.address, to: receiver.address) else {
                                await Task.yield()
                                continue
                            }
                            let decrypted = try await receiver.manager.decrypt(message.bytes, from: sender.address).plaintext
                            received.append(Delivery(from: sender.address, to: receiver.address, message: message, decrypted: decrypted))
                        }
                        return received
                    }
                }
            }
            var all: [Delivery] = []
            for try await part in group { all.append(contentsOf: part) }
            return all
        }

        let pairs = devices.count * (devices.count - 1)
        XCTAssertEqual(deliveries.count, pairs * perPair, "every message delivered")
        // Each ciphertext decrypted to its own plaintext: nothing mixed up between messages.
        XCTAssertTrue(deliveries.allSatisfy { $0.decrypted == $0.message.plaintext }, "a message decrypted to another's plaintext")
        // Nothing lost or duplicated.
        XCTAssertEqual(Set(deliveries.map(\.decrypted)).count, deliveries.count, "a plaintext received twice")

        // Within each sending chain the message numbers are used once each, without gaps, and a
        // task's later messages carry later numbers (encryption order is chain order).
        let byPair = Dictionary(grouping: deliveries) { "\($0.from)->\($0.to)" }
        XCTAssertEqual(byPair.count, pairs)
        for (pair, items) in byPair {
            let headers = try items.map { try IncomingMessage(serialized: $0.message.bytes).ratchetMessage }
            let chains = Dictionary(grouping: zip(items, headers)) { $0.1.ratchetKey }
            for (_, chain) in chains {
                let counters = chain.map(\.1.counter).sorted()
                XCTAssertEqual(counters, Array((counters.first ?? 0) ... (counters.last ?? 0)), "\(pair): a chain with a gap or a repeat")
                for task in 0 ..< tasksPerPair {
                    let ordered = chain.filter { $0.0.message.task == task }.sorted { $0.0.message.sequence < $1.0.message.sequence }
                    XCTAssertEqual(ordered.map(\.1.counter), ordered.map(\.1.counter).sorted(), "\(pair) task \(task): numbers out of order")
                }
            }
        }

        // Afterwards every pair still talks, in both directions.
        for sender in devices {
            for receiver in devices where receiver.address != sender.address {
                let message = try await sender.manager.encrypt(utf8("after"), to: receiver.address)
                let decrypted = try await receiver.manager.decrypt(message, from: sender.address).plaintext
                XCTAssertEqual(decrypted, utf8("after"))
            }
        }
    }

    func testMessagesOfOneChainDeliveredInOrderArriveInTheOrderTheyWereSent() async throws {
        let devices = try await mesh(seed: 920)
        let (alice, bob) = (devices[0], devices[3])
        // Two tasks encrypt concurrently; the chain order is the counter order.
        let sent = try await withThrowingTaskGroup(of: [[UInt8]].self) { group in
            for task in 0 ..< 2 {
                group.addTask {
                    var messages: [[UInt8]] = []
                    for index in 0 ..< 20 { messages.append(try await alice.manager.encrypt(utf8("t\(task) m\(index)"), to: bob.address)) }
                    return messages
                }
            }
            var all: [[UInt8]] = []
            for try await part in group { all.append(contentsOf: part) }
            return all
        }
        let inChainOrder = try sent.sorted {
            try IncomingMessage(serialized: $0).ratchetMessage.counter < IncomingMessage(serialized: $1).ratchetMessage.counter
        }
        var received: [[UInt8]] = []
        for message in inChainOrder { received.append(try await bob.manager.decrypt(message, from: alice.address).plaintext) }
        XCTAssertEqual(received.count, 40)
        let skipped = await bob.base.loadSession(for: alice.address)?.currentSession?.skippedMessageKeyCount
        XCTAssertEqual(skipped, 0, "delivered in chain order, nothing was skipped")
        // Each task's messages arrive in the order that task sent them.
        for task in 0 ..< 2 {
            let mine = received.map { String(decoding: $0, as: UTF8.self) }.filter { $0.hasPrefix("t\(task) ") }
            XCTAssertEqual(mine, (0 ..< 20).map { "t\(task) m\($0)" })
        }
        XCTAssertEqual(Set(received).count, 40)
    }

    func testConcurrentGroupSendersAndReceiversDeliverEveryMessageOnceToEveryMember() async throws {
        let devices = try await mesh(seed: 940)
        let group = groupID("stress")
        try await makeGroup(group, of: devices)
        // Every member hands its chain to every other member through the pairwise sessions.
        for sender in devices {
            let distribution = try await sender.manager.senderKeyDistributionMessage(for: group).serialized
            for receiver in devices where receiver.address != sender.address {
                try await receiver.manager.processSenderKeyDistribution(distribution, for: group, from: sender.address)
            }
        }
        let network = Network()
        let tasksPerSender = 2
        let messagesPerTask = 10
        let expectedPerPair = tasksPerSender * messagesPerTask
        let deliveries = try await withThrowingTaskGroup(of: [Delivery].self) { taskGroup in
            for sender in devices {
                for task in 0 ..< tasksPerSender {
                    taskGroup.addTask {
                        for sequence in 0 ..< messagesPerTask {
                            let text = utf8("\(sender.address) g t\(task) #\(sequence)")
                            let bytes = try await sender.manager.groupEncrypt(text, for: group)
                            // Fan-out: the same bytes go to every other member.
                            for receiver in devices where receiver.address != sender.address {
                                await network.post(.init(bytes: bytes, plaintext: text, task: task, sequence: sequence),
                                                   from: sender.address, to: receiver.address)
                            }
                        }
                        return []
                    }
                }
                for receiver in devices where receiver.address != sender.address {
                    taskGroup.addTask {
                        var received: [Delivery] = []
                        while received.count < expectedPerPair {
                            guard let message = await network.take(from: sender.address, to: receiver.address) else {
                                await Task.yield()
                                continue
                            }
                            let decrypted = try await receiver.manager.groupDecrypt(message.bytes, for: group, from: sender.address)
                            received.append(Delivery(from: sender.address, to: receiver.address, message: message, decrypted: decrypted))
                        }
                        return received
                    }
                }
            }
            var all: [Delivery] = []
            for try await part in taskGroup { all.append(contentsOf: part) }
            return all
        }
        XCTAssertEqual(deliveries.count, devices.count * (devices.count - 1) * expectedPerPair)
        XCTAssertTrue(deliveries.allSatisfy { $0.decrypted == $0.message.plaintext })
        for receiver in devices {
            let mine = deliveries.filter { $0.to == receiver.address }.map(\.decrypted)
            XCTAssertEqual(Set(mine).count, mine.count, "\(receiver.address) received a group message twice")
        }
        // Each sender's chain used every iteration once.
        for sender in devices {
            let iterations = try Set(deliveries.filter { $0.from == sender.address }.map {
                try SenderKeyMessage(serialized: $0.message.bytes).iteration
            })
            XCTAssertEqual(iterations, Set(0 ..< UInt32(tasksPerSender * messagesPerTask)))
        }
    }
}
