import Foundation
@_spi(Testing) import SessionKit
import SignalPrimitives

/// The `ratchet` suite (SPEC §3–§4, §8): a scripted conversation between Alice (initiator at
/// her address, whose session exists from the start) and Bob (responder at his, holding one
/// signed prekey, optionally a one-time prekey and optionally a one-time KEM prekey; his
/// signed prekey is signed with `kem` = 1 exactly when he has a KEM prekey). Each party draws
/// its `ratchet_keys` in order whenever SPEC §4 asks for a new X25519 key. Each party keeps a
/// `SessionRecord` per peer address; messages are delivered from the other party's address
/// unless an event names a `from_address`. `send` events must reproduce `message` exactly;
/// `recv` events deliver an earlier send or raw bytes and expect `plaintext` or `error`.
/// Either may carry `content_type` (SPEC §2, default 1): the type a send pads with (2 for a
/// sender-key distribution), or the type a receiver expects.
/// After every failed delivery the runner also checks that the receiver's records, its
/// prekeys and replay records and its key queue are exactly as before.
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
        let address: ProtocolAddress
        let peer: ProtocolAddress
        var records: [ProtocolAddress: SessionRecord]
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
        let kem = try VectorKEM.make()
        let aliceFields = try test.object("alice")
        let bobFields = try test.object("bob")
        let aliceAddress = try aliceFields.address("address")
        let bobAddress = try bobFields.address("address")

        let bobIdentity = try IdentityKeyPair(seed: bobFields.hex("identity_seed"))
        let kemSeed = try bobFields.optionalHex("kem_seed")
        let signedPreKey = try SignedPreKey(
            id: try bobFields.uint32("spk_id"), privateKey: bobFields.hex("spk_sk"), signedBy: bobIdentity,
            signsKEMPreKeys: kemSeed != nil)
        let oneTimePreKey = try bobFields.optionalHex("opk_sk").map { try OneTimePreKey(id: try bobFields.uint32("opk_id"), privateKey: $0) }
        let kemPreKey = try kemSeed.map {
            try KEMPreKey(id: try bobFields.uint32("kem_id"), kind: .oneTime, seed: $0, signedBy: bobIdentity, kem: kem)
        }
        var bob = Party(
            identity: bobIdentity, address: bobAddress, peer: aliceAddress, records: [:],
            preKeys: PreKeySet(
                signedPreKeys: [signedPreKey], oneTimePreKeys: oneTimePreKey.map { [$0] } ?? [],
                kemPreKeys: kemPreKey.map { [$0] } ?? []),
            random: QueuedRandomSource(keys: try bobFields.hexArray("ratchet_keys")))

        let aliceIdentity = try IdentityKeyPair(seed: aliceFields.hex("identity_seed"))
        let aliceRandom = QueuedRandomSource(keys: try aliceFields.hexArray("ratchet_keys"))
        // An optional `registration_id` in `alice` or `bob` (SPEC §9; §8 names it only for the
        // `bundle` and `x3dh` suites, so this is the runner's reading): Alice's goes into her
        // prefix P (flag bit 2), Bob's into his bundle.
        let bundle = PreKeyBundle(
            identityKey: bobIdentity.publicKey, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey, kemPreKey: kemPreKey,
            registrationID: try bobFields.optionalRegistrationID())
        let aliceSession = try SessionState(
            initiatingWith: bundle, identity: aliceIdentity, localAddress: aliceAddress, remoteAddress: bobAddress,
            ephemeralKey: X25519.PrivateKey(rawRepresentation: aliceFields.hex("x3dh_ephemeral_sk")),
            encapsulation: try aliceFields.optionalEncapsulation("kem_encapsulation"),
            registrationID: try aliceFields.optionalRegistrationID(), configuration: configuration, random: aliceRandom)
        try aliceRandom.check()
        var alice = Party(
            identity: aliceIdentity, address: aliceAddress, peer: bobAddress,
            records: [bobAddress: SessionRecord(currentSession: aliceSession)], preKeys: PreKeySet(), random: aliceRandom)

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
                        try receive(message, event, by: &alice, kem: kem, configuration: configuration)
                    } else if to == "bob" {
                        try receive(message, event, by: &bob, kem: kem, configuration: configuration)
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
        let contentType = try event.contentType()
        let peer = party.peer
        func encrypt() throws -> [UInt8] {
            guard var record = party.records[peer] else { throw SessionError.noSession }
            let message = try record.encrypt(plaintext, contentType: contentType)
            party.records[peer] = record
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
        _ message: [UInt8], _ event: VectorTest, by party: inout Party, kem: any KeyEncapsulationMechanism,
        configuration: SessionConfiguration
    ) throws {
        let sender = try event.optionalAddress("from_address") ?? party.peer
        let contentType = try event.contentType()
        let before = snapshot(of: party)
        let drawnBefore = party.random.drawn
        func decrypt() throws -> [UInt8] {
            // The record is decrypted in place and put back even when the call throws, so that
            // the snapshot below sees whatever a failed call left in it.
            let held = party.records[sender] != nil
            var record = party.records.removeValue(forKey: sender) ?? SessionRecord()
            defer { if held || !record.isEmpty { party.records[sender] = record } }
            let result = try record.decrypt(
                message, identity: party.identity, localAddress: party.address, remoteAddress: sender, preKeys: party.preKeys,
                kem: kem, configuration: configuration, random: party.random, contentType: contentType)
            // What the store does in the write that stores the record (SPEC §3).
            if let consumption = result.consumption { try party.preKeys.apply(consumption) }
            return result.plaintext
        }
        if let expected = event.expectedError {
            try ExpectedError.check(expected) { _ = try decrypt() }
            try party.random.check()
            guard snapshot(of: party) == before else {
                throw VectorFailure("a failed decryption changed the receiver's sessions, prekeys or replay records")
            }
            guard party.random.drawn == drawnBefore else { throw VectorFailure("a failed decryption drew a ratchet key") }
            return
        }
        let plaintext = try decrypt()
        try party.random.check()
        try ExpectedError.equal(plaintext, try event.hex("plaintext"), "plaintext")
    }

    /// Everything a failed decryption must leave as it was: every record (serialized), the
    /// one-time and KEM prekeys held, and the EK_A replay records.
    private static func snapshot(of party: Party) -> [[UInt8]] {
        let records = party.records.keys.map(\.encoded).sorted { $0.lexicographicallyPrecedes($1) }.map { key in
            key + (party.records.first { $0.key.encoded == key }?.value.serialized() ?? [])
        }
        let oneTime = party.preKeys.oneTimePreKeys.keys.sorted().map { [UInt8(0x01)] + u32($0) }
        let kem = party.preKeys.kemPreKeys.keys.sorted().map { [UInt8(0x02)] + u32($0) }
        let recorded = party.preKeys.recordedBaseKeys.flatMap { id, keys in keys.map { u32(id) + $0.rawRepresentation } }
            .sorted { $0.lexicographicallyPrecedes($1) }
        return records + oneTime + kem + recorded
    }

    private static func u32(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
