@_spi(Testing) import SessionKit
import SignalPrimitives

/// SPEC §8 suite `sender-key` (§5). The sender at `sender_address` starts its chain for the
/// group `group_id` at `chain_key` (iteration 0) with the signing key of `signing_seed` and
/// first advances to `iteration`; its distribution message there must equal `distribution`,
/// and one receiver processes it for `group_id` from `sender_address`. The receiver then
/// processes each `more_distributions` entry for its `group_id` from its `from_address` (the
/// sender by default): one with `error` must fail with it, one with `"ignored": true` must be
/// accepted and change nothing, any other must be stored. Then `events` run in order:
///
/// * `{"op": "send", "plaintext", "message"}`: the sender's encryption must give exactly
///   `message` (sends are numbered 0, 1, … in order);
/// * `{"op": "recv", "send": K | "message": hex, "plaintext" | "error"}`, optionally with
///   `group_id` and `from_address` (the group the receiver decrypts for and the sender it
///   believes): the receiver decrypts and must give `plaintext` or throw `error`. After a
///   failure, every state the receiver holds must be unchanged (SPEC §5 is transactional).
public enum SenderKeySuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "sender-key"

    /// The largest `iteration` the runner advances a chain to. Advancing costs one HMAC per
    /// step, so a hostile file could otherwise keep the runner busy for 2^32 steps; the
    /// committed vectors use at most 65536.
    public static let maximumIteration: UInt32 = 1 << 20

    /// What the receiver holds from one sender in one group.
    private struct StateKey: Hashable {
        let group: GroupID
        let sender: ProtocolAddress
    }

    /// Runs one test.
    /// - Throws: `VectorFailure` on a mismatch or a malformed test, including an `iteration`
    ///   above `maximumIteration`.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let group = try test.groupID("group_id")
        let senderAddress = try test.address("sender_address")
        let chainKey = try test.hex("chain_key")
        let signingSeed = try test.hex("signing_seed")
        let iteration = try test.uint32("iteration")
        guard iteration <= maximumIteration else {
            throw VectorFailure("iteration \(iteration) is above the runner's limit of \(maximumIteration)")
        }
        let signingKey: Ed25519.PrivateKey
        do { signingKey = try Ed25519.PrivateKey(seed: signingSeed) } catch {
            throw VectorFailure("signing_seed is not a 32-byte seed: \(error)")
        }
        var sender: SenderKeySendingChain
        do {
            sender = try SenderKeySendingChain(
                group: group, sender: senderAddress, initialChainKey: chainKey, signingKey: signingKey, iteration: iteration)
        } catch {
            throw VectorFailure("chain_key is not a 32-byte key: \(error)")
        }

        let distribution = try sender.distributionMessage().serialized
        try ExpectedError.equal(distribution, try test.hex("distribution"), "distribution")
        var receiver: [StateKey: SenderKeyReceiverState] = [:]
        try process(distribution, for: group, from: senderAddress, into: &receiver)

        if test.has("more_distributions") {
            for (position, entry) in try test.objects("more_distributions").enumerated() {
                do {
                    try processExtra(entry, defaultSender: senderAddress, into: &receiver)
                } catch let failure as VectorFailure {
                    throw VectorFailure("more_distributions \(position): \(failure.message)")
                } catch {
                    throw VectorFailure("more_distributions \(position): unexpected error \(ExpectedError.name(of: error))")
                }
            }
        }

        var sends = [[UInt8]]()
        for (position, event) in try test.objects("events").enumerated() {
            do {
                switch try event.string("op") {
                case "send":
                    try send(event, sender: &sender, sends: &sends)
                case "recv":
                    try receive(event, group: group, sender: senderAddress, receiver: &receiver, sends: sends)
                case let other:
                    throw VectorFailure("unknown op '\(other)'")
                }
            } catch let failure as VectorFailure {
                throw VectorFailure("event \(position): \(failure.message)")
            } catch {
                throw VectorFailure("event \(position): unexpected error \(ExpectedError.name(of: error))")
            }
        }
        return .passed
    }

    private static func process(
        _ bytes: [UInt8], for group: GroupID, from sender: ProtocolAddress, into receiver: inout [StateKey: SenderKeyReceiverState]
    ) throws {
        let key = StateKey(group: group, sender: sender)
        var state = receiver[key] ?? SenderKeyReceiverState()
        try state.processDistribution(bytes, for: group)
        receiver[key] = state
    }

    private static func processExtra(
        _ entry: VectorTest, defaultSender: ProtocolAddress, into receiver: inout [StateKey: SenderKeyReceiverState]
    ) throws {
        let bytes = try entry.hex("distribution")
        let group = try entry.groupID("group_id")
        let from = try entry.optionalAddress("from_address") ?? defaultSender
        let before = snapshot(receiver)
        if let expected = entry.expectedError {
            try ExpectedError.check(expected) { try process(bytes, for: group, from: from, into: &receiver) }
            guard snapshot(receiver) == before else { throw VectorFailure("a refused distribution changed the receiver's state") }
            return
        }
        try process(bytes, for: group, from: from, into: &receiver)
        if entry.fields["ignored"] as? Bool == true {
            guard snapshot(receiver) == before else { throw VectorFailure("an ignored distribution changed the receiver's state") }
        } else {
            guard snapshot(receiver) != before else { throw VectorFailure("a distribution to store changed nothing") }
        }
    }

    private static func send(_ event: VectorTest, sender: inout SenderKeySendingChain, sends: inout [[UInt8]]) throws {
        let plaintext = try event.hex("plaintext")
        if let expected = event.expectedError {
            try ExpectedError.check(expected) { _ = try sender.encrypt(plaintext) }
            return
        }
        let message = try sender.encrypt(plaintext)
        try ExpectedError.equal(message, try event.hex("message"), "message of send \(sends.count)")
        sends.append(message)
    }

    private static func receive(
        _ event: VectorTest, group defaultGroup: GroupID, sender defaultSender: ProtocolAddress,
        receiver: inout [StateKey: SenderKeyReceiverState], sends: [[UInt8]]
    ) throws {
        let message: [UInt8]
        if event.has("message") {
            message = try event.hex("message")
        } else {
            let index = try event.int("send")
            guard sends.indices.contains(index) else { throw VectorFailure("send \(index) has not happened") }
            message = sends[index]
        }
        let group = event.has("group_id") ? try event.groupID("group_id") : defaultGroup
        let from = try event.optionalAddress("from_address") ?? defaultSender
        let key = StateKey(group: group, sender: from)
        func decrypt() throws -> [UInt8] {
            guard var state = receiver[key] else {
                // Type and length errors come before the missing chain (SPEC §5's order).
                _ = try SenderKeyMessage(serialized: message)
                throw SessionError.unknownChain
            }
            // Decrypted in place and put back even when the call throws, so that the snapshot
            // below sees whatever a failed call left in the state.
            defer { receiver[key] = state }
            return try state.decrypt(message, for: group, from: from)
        }
        if let expected = event.expectedError {
            let before = snapshot(receiver)
            try ExpectedError.check(expected) { _ = try decrypt() }
            guard snapshot(receiver) == before else { throw VectorFailure("the failed decryption changed the receiver's state") }
            return
        }
        try ExpectedError.equal(try decrypt(), try event.hex("plaintext"), "plaintext")
    }

    /// Every state the receiver holds, serialized, in a stable order.
    private static func snapshot(_ receiver: [StateKey: SenderKeyReceiverState]) -> [[UInt8]] {
        receiver.map { $0.key.group.encoded + $0.key.sender.encoded + $0.value.serialized() }
            .sorted { $0.lexicographicallyPrecedes($1) }
    }
}
