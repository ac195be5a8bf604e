import Foundation
import SessionKit
import SignalPrimitives

/// The `ratchet` suite (SPEC §3–§4, §8): a scripted conversation between Alice (initiator,
/// whose session exists from the start) and Bob (responder, holding one signed prekey and
/// optionally one one-time prekey). Each party draws its `ratchet_keys` in order whenever
/// SPEC §4 asks for a new X25519 key. `send` events must reproduce `message` exactly;
/// `recv` events deliver an earlier send or raw bytes and expect `plaintext` or `error`.
/// After every failed delivery the runner also checks that the receiver's serialized
/// session, its prekeys and its key queue are exactly as before.
public enum RatchetSuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "ratchet"

    /// A random source that hands out the test's `ratchet_keys` in order, 32 bytes per
    /// request; anything else is recorded as a runner failure.
    final class QueuedRandomSource: RandomSource, @unchecked Sendable {
        private let lock = NSLock()
        private let keys: [[UInt8]]
        private var next = 0
        private var problem: String?

        init(keys: [[UInt8]]) { self.keys = keys }

        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            lock.lock()
            defer { lock.unlock() }
            guard buffer.count == X25519.keyByteCount, next < keys.count, keys[next].count == X25519.keyByteCount else {
                if problem == nil {
                    problem = next < keys.count
                        ? "a random request of \(buffer.count) bytes is not a ratchet key"
                        : "ran out of ratchet_keys after \(keys.count)"
                }
                buffer.initializeMemory(as: UInt8.self, repeating: 0)
                return
            }
            buffer.copyBytes(from: keys[next])
            next += 1
        }

        /// How many keys were drawn.
        var drawn: Int {
            lock.lock()
            defer { lock.unlock() }
            return next
        }

        /// Throws the first misuse recorded.
        func check() throws {
            lock.lock()
            defer { lock.unlock() }
            if let problem { throw VectorFailure(problem) }
        }
    }

    /// One party of the conversation.
    private struct Party {
        let identity: IdentityKeyPair
        var session: SessionState?
        var preKeys: PreKeySet
        let random: QueuedRandomSource
    }

    /// The largest `max_stored` the runner accepts (and so the largest `max_skip`, which must
    /// not exceed it). A session may derive `max_skip` keys for one message and keep
    /// `max_stored`, so a hostile file could otherwise make the runner derive and hold billions
    /// of keys; the committed vectors use the defaults or less.
    public static let maximumStored = 100_000

    /// Runs one test.
    /// - Throws: `VectorFailure` when the library disagrees with the test, when a field is
    ///   missing or malformed, or when `max_stored` is above `maximumStored` or `max_skip` is
    ///   negative or above `max_stored`.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let maxSkip = try test.int("max_skip")
        let maxStored = try test.optionalInt("max_stored") ?? ProtocolLimits.defaultMaxStored
        guard maxStored <= maximumStored else {
            throw VectorFailure("max_stored \(maxStored) is above the runner's limit of \(maximumStored)")
        }
        guard (0...maxStored).contains(maxSkip) else {
            throw VectorFailure("max_skip \(maxSkip) is not in 0 … max_stored (\(maxStored))")
        }
        let configuration: SessionConfiguration
        do {
            configuration = try SessionConfiguration(maxSkip: maxSkip, maxStored: maxStored)
        } catch {
            throw VectorFailure("unusable limits: \(error)")
        }
        let aliceFields = try test.object("alice")
        let bobFields = try test.object("bob")

        let bobIdentity = try IdentityKeyPair(seed: bobFields.hex("identity_seed"))
        let signedPreKeyPrivate = try X25519.PrivateKey(rawRepresentation: bobFields.hex("spk_sk"))
        let signedPreKey = try SignedPreKey(
            id: try bobFields.uint32("spk_id"), privateKey: bobFields.hex("spk_sk"),
            signature: bobIdentity.signature(forSignedPreKey: signedPreKeyPrivate.publicKey))
        var oneTimePreKey: OneTimePreKey?
        if let secret = try bobFields.optionalHex("opk_sk") {
            oneTimePreKey = try OneTimePreKey(id: try bobFields.uint32("opk_id"), privateKey: secret)
        }
        var bob = Party(
            identity: bobIdentity, session: nil,
            preKeys: PreKeySet(signedPreKeys: [signedPreKey], oneTimePreKeys: oneTimePreKey.map { [$0] } ?? []),
            random: QueuedRandomSource(keys: try bobFields.hexArray("ratchet_keys")))

        let aliceIdentity = try IdentityKeyPair(seed: aliceFields.hex("identity_seed"))
        let aliceRandom = QueuedRandomSource(keys: try aliceFields.hexArray("ratchet_keys"))
        let bundle = PreKeyBundle(identityKey: bobIdentity.publicKey, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey)
        let aliceSession = try SessionState(
            initiatingWith: bundle, identity: aliceIdentity,
            ephemeralKey: X25519.PrivateKey(rawRepresentation: aliceFields.hex("x3dh_ephemeral_sk")),
            configuration: configuration, random: aliceRandom)
        try aliceRandom.check()
        var alice = Party(identity: aliceIdentity, session: aliceSession, preKeys: PreKeySet(), random: aliceRandom)

        var sends: [[UInt8]] = []
        for (index, event) in try test.objects("events").enumerated() {
            do {
                switch try event.string("op") {
                case "send":
                    let from = try event.string("from")
                    if from == "alice" {
                        try send(event, by: &alice, sends: &sends)
                    } else if from == "bob" {
                        try send(event, by: &bob, sends: &sends)
                    } else {
                        throw VectorFailure("unknown party '\(from)'")
                    }
                case "recv":
                    let message: [UInt8]
                    if event.has("message") {
                        message = try event.hex("message")
                    } else {
                        let number = try event.int("send")
                        guard sends.indices.contains(number) else { throw VectorFailure("send \(number) does not exist yet") }
                        message = sends[number]
                    }
                    let to = try event.string("to")
                    if to == "alice" {
                        try receive(message, event, by: &alice, configuration: configuration)
                    } else if to == "bob" {
                        try receive(message, event, by: &bob, configuration: configuration)
                    } else {
                        throw VectorFailure("unknown party '\(to)'")
                    }
                case let op:
                    throw VectorFailure("unknown op '\(op)'")
                }
            } catch let failure as VectorFailure {
                throw VectorFailure("event \(index): \(failure.message)")
            } catch {
                throw VectorFailure("event \(index): \(ExpectedError.name(of: error))")
            }
        }
        return .passed
    }

    private static func send(_ event: VectorTest, by party: inout Party, sends: inout [[UInt8]]) throws {
        let plaintext = try event.hex("plaintext")
        func encrypt() throws -> [UInt8] {
            guard party.session != nil, let message = try party.session?.encrypt(plaintext) else { throw SessionError.noSession }
            return message
        }
        if let expected = event.expectedError {
            try ExpectedError.check(expected) { _ = try encrypt() }
            sends.append([])
            return
        }
        let expectedMessage = try event.hex("message")
        let message = try encrypt()
        try party.random.check()
        try ExpectedError.equal(message, expectedMessage, "message")
        sends.append(expectedMessage)
    }

    private static func receive(
        _ message: [UInt8], _ event: VectorTest, by party: inout Party, configuration: SessionConfiguration
    ) throws {
        let before = party.session?.serialized()
        let drawnBefore = party.random.drawn
        let preKeysBefore = party.preKeys.oneTimePreKeys.keys.sorted()
        func decrypt() throws -> [UInt8] {
            let result = try SessionCipher.decrypt(
                message, session: &party.session, identity: party.identity, preKeys: party.preKeys,
                configuration: configuration, random: party.random)
            if let consumed = result.consumedOneTimePreKeyID { party.preKeys.removeOneTimePreKey(id: consumed) }
            return result.plaintext
        }
        if let expected = event.expectedError {
            try ExpectedError.check(expected) { _ = try decrypt() }
            try party.random.check()
            guard party.session?.serialized() == before else { throw VectorFailure("a failed decryption changed the session") }
            guard party.random.drawn == drawnBefore else { throw VectorFailure("a failed decryption drew a ratchet key") }
            guard party.preKeys.oneTimePreKeys.keys.sorted() == preKeysBefore else {
                throw VectorFailure("a failed decryption consumed a one-time prekey")
            }
            return
        }
        let plaintext = try decrypt()
        try party.random.check()
        try ExpectedError.equal(plaintext, try event.hex("plaintext"), "plaintext")
    }
}
