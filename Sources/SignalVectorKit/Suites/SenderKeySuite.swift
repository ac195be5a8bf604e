import SessionKit
import SignalPrimitives

/// SPEC §8 suite `sender-key`. The sender's chain starts at `chain_key` (iteration 0) with
/// the signing key of `signing_seed` and first advances to `iteration`; its distribution
/// message there must equal `distribution`, and one receiver processes it. Then `events` run
/// in order:
///
/// * `{"op": "send", "plaintext", "message"}`: the sender's encryption must give exactly
///   `message` (sends are numbered 0, 1, … in order);
/// * `{"op": "recv", "send": K | "message": hex, "plaintext" | "error"}`: the receiver
///   decrypts send K or the raw bytes and must give `plaintext` or throw `error`. After a
///   failure, the receiver's serialized state must be unchanged (SPEC §5 is transactional).
public enum SenderKeySuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "sender-key"

    /// The largest `iteration` the runner advances a chain to. Advancing costs one HMAC per
    /// step, so a hostile file could otherwise keep the runner busy for 2^32 steps; the
    /// committed vectors use at most 65536.
    public static let maximumIteration: UInt32 = 1 << 20

    /// Runs one test.
    /// - Throws: `VectorFailure` on a mismatch or a malformed test, including an `iteration`
    ///   above `maximumIteration`.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
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
            sender = try SenderKeySendingChain(initialChainKey: chainKey, signingKey: signingKey, iteration: iteration)
        } catch {
            throw VectorFailure("chain_key is not a 32-byte key: \(error)")
        }

        let distribution = try sender.distributionMessage().serialized
        try ExpectedError.equal(distribution, try test.hex("distribution"), "distribution")
        var receiver = SenderKeyReceiverState()
        try receiver.processDistribution(distribution)

        var sends = [[UInt8]]()
        for (position, event) in try test.objects("events").enumerated() {
            do {
                switch try event.string("op") {
                case "send":
                    try send(event, sender: &sender, sends: &sends)
                case "recv":
                    try receive(event, receiver: &receiver, sends: sends)
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

    private static func receive(_ event: VectorTest, receiver: inout SenderKeyReceiverState, sends: [[UInt8]]) throws {
        let message: [UInt8]
        if event.has("message") {
            message = try event.hex("message")
        } else {
            let index = try event.int("send")
            guard sends.indices.contains(index) else { throw VectorFailure("send \(index) has not happened") }
            message = sends[index]
        }
        if let expected = event.expectedError {
            let before = receiver.serialized()
            try ExpectedError.check(expected) { _ = try receiver.decrypt(message) }
            guard receiver.serialized() == before else {
                throw VectorFailure("the failed decryption changed the receiver's state")
            }
            return
        }
        try ExpectedError.equal(try receiver.decrypt(message), try event.hex("plaintext"), "plaintext")
    }
}
