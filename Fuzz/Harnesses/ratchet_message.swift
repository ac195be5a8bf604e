// Harness `ratchet_message`: Double Ratchet decryption (SPEC §4, v2) between two established
// parties (Alice at alice.1, Bob at bob.7), each holding a `SessionRecord`, through
// `SessionRecord.decrypt`.
//
// The first input byte picks a base (mod 8): a session after a full handshake, or one where
// Alice has had no reply yet (her messages are prekey messages 0x22 and she has no receiving
// chain); small limits (MAX_SKIP 6, MAX_STORED 9, so the fuzzer reaches skipping and
// eviction) or SPEC's defaults (256, 2000); a classic handshake or one with a one-time KEM
// prekey (PQXDH, with the stand-in KEM of FuzzSupport.swift). Then a program of operations:
// either party encrypts one or several messages, a sent message is delivered, replayed,
// tampered with or truncated, raw bytes are delivered, or a party's record is persisted and
// reloaded.
//
// A model of each receiver (SPEC §4: DHr, Nr, whether a receiving chain exists, stored
// skipped keys in insertion order with MAX_STORED eviction, chains already left) predicts
// the outcome of every authentic delivery. Invariants:
//   - an authentic message decrypts exactly when the model says, to the plaintext that was
//     sent; when the model predicts duplicateMessage, tooManySkippedMessages or
//     invalidMessage (header.dh = DHr without a receiving chain), that error;
//   - nothing decrypts twice; nothing decrypts that was not sent (tampered, truncated, raw);
//   - every error is a SPEC §4 receiver error (decoding errors exactly those of the reference
//     decoder `WireReference`), and after any error the serialized record is byte-for-byte
//     unchanged and nothing was drawn from the random source;
//   - a decryption never establishes or promotes a session here (Bob's one-time prekeys and
//     EK_A record are consumed by the handshake: an altered EK_A cannot start a new session),
//     and persisting and reloading a record gives the same bytes.
@_spi(Testing) import SessionKit
import SignalPrimitives

// (`ReceiverModel`, the model of one receiver, is in FuzzSupport.swift: `session_routing` uses it too.)

enum Harness {
    struct Base {
        let configuration: SessionConfiguration
        let identities: [IdentityKeyPair]
        let records: [SessionRecord]
        let preKeys: [PreKeySet]
        let models: [ReceiverModel]
    }

    static let addresses = [Addresses.alice, Addresses.bob]
    static let kem = StandInKEM()
    static let allowed: Set<SessionError> = [.unsupportedVersion, .invalidMessage, .invalidKey, .noSession, .unknownPreKey,
                                             .duplicateMessage, .tooManySkippedMessages, .invalidPadding]

    static func header(_ bytes: [UInt8]) -> RatchetMessage {
        do { return try IncomingMessage(serialized: bytes).ratchetMessage } catch { fail("own message does not decode: \(error)") }
    }

    /// Alice and Bob after Alice's first (prekey) message, and after Bob's reply when `replied`.
    static func makeBase(maxSkip: Int, maxStored: Int, replied: Bool, hybrid: Bool) -> Base {
        do {
            let configuration = try SessionConfiguration(maxSkip: maxSkip, maxStored: maxStored)
            let setup = CountingRandomSource(seed: 0xBA5E)
            let alice = try IdentityKeyPair(using: setup)
            let bob = try IdentityKeyPair(using: setup)
            let signed = try SignedPreKey(id: 7, signedBy: bob, signsKEMPreKeys: hybrid, using: setup)
            let oneTime = try OneTimePreKey(id: 42, using: setup)
            let kemPreKey = hybrid ? try KEMPreKey(id: 5, kind: .oneTime, signedBy: bob, kem: kem, using: setup) : nil
            let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: signed, oneTimePreKey: oneTime, kemPreKey: kemPreKey)
            let aliceSession = try SessionState(initiatingWith: bundle, identity: alice, localAddress: Addresses.alice,
                                                remoteAddress: Addresses.bob, kem: kem, configuration: configuration, random: setup)
            var aliceRecord = SessionRecord(currentSession: aliceSession)
            var bobRecord = SessionRecord()
            var bobPreKeys = PreKeySet(signedPreKeys: [signed], oneTimePreKeys: [oneTime], kemPreKeys: kemPreKey.map { [$0] } ?? [])
            let first = try aliceRecord.encrypt(Array("hello".utf8))
            let accepted = try bobRecord.decrypt(first, identity: bob, localAddress: Addresses.bob, remoteAddress: Addresses.alice,
                                                 preKeys: bobPreKeys, kem: kem, configuration: configuration, random: setup)
            guard let consumption = accepted.consumption else { fail("handshake did not establish a session") }
            try bobPreKeys.apply(consumption)
            let firstHeader = header(first)
            var aliceModel = ReceiverModel(dhr: signed.publicKey.rawRepresentation, hasChain: false, nr: 0,
                                           maxSkip: maxSkip, maxStored: maxStored)
            let bobModel = ReceiverModel(dhr: firstHeader.ratchetKey.rawRepresentation, hasChain: true, nr: 1,
                                         maxSkip: maxSkip, maxStored: maxStored)
            if replied {
                let reply = try bobRecord.encrypt(Array("hi".utf8))
                _ = try aliceRecord.decrypt(reply, identity: alice, localAddress: Addresses.alice, remoteAddress: Addresses.bob,
                                            preKeys: PreKeySet(), kem: kem, configuration: configuration, random: setup)
                let replyHeader = header(reply)
                invariant(aliceModel.deliver(dh: replyHeader.ratchetKey.rawRepresentation, pn: Int(replyHeader.previousCounter),
                                             n: Int(replyHeader.counter)) == .success, "model rejects the handshake")
            }
            return Base(configuration: configuration, identities: [alice, bob], records: [aliceRecord, bobRecord],
                        preKeys: [PreKeySet(), bobPreKeys], models: [aliceModel, bobModel])
        } catch {
            fail("building the base sessions failed: \(error)")
        }
    }

    static let bases: [Base] = [false, true].flatMap { hybrid in
        [(6, 9, true), (6, 9, false), (256, 2000, true), (256, 2000, false)].map {
            makeBase(maxSkip: $0.0, maxStored: $0.1, replied: $0.2, hybrid: hybrid)
        }
    }

    struct Sent {
        let from: Int
        let bytes: [UInt8]
        let plaintext: [UInt8]
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let base = bases[Int(input.byte()) % bases.count]
        var records = base.records
        var models = base.models
        let randoms = [CountingRandomSource(seed: 1), CountingRandomSource(seed: 2)]
        var sent: [Sent] = []
        var delivered = Set<[UInt8]>()     // (receiver, dh, n) of every success
        var operations = 0

        func encrypt(_ party: Int, _ plaintext: [UInt8]) {
            guard sent.count < 400 else { return }
            do {
                let message = try records[party].encrypt(plaintext)
                sent.append(Sent(from: party, bytes: message, plaintext: plaintext))
            } catch {
                fail("encrypt threw \(error)")
            }
        }

        /// Delivers `message` to `party`; checks transactionality and the error set.
        func deliver(_ message: [UInt8], to party: Int) -> Result<[UInt8], SessionError> {
            let before = records[party].serialized()
            let draws = randoms[party].draws
            do {
                let result = try records[party].decrypt(message, identity: base.identities[party], localAddress: addresses[party],
                                                        remoteAddress: addresses[1 - party], preKeys: base.preKeys[party], kem: kem,
                                                        configuration: base.configuration, random: randoms[party])
                invariant(!result.establishedSession && result.consumption == nil && !result.promotedPreviousSession,
                          "a delivery established or promoted a session")
                invariant(result.remoteIdentityKey == base.identities[1 - party].publicKey, "another remote identity")
                let ratchet = header(message)
                let key = [UInt8(party)] + ratchet.ratchetKey.rawRepresentation + u32(ratchet.counter)
                invariant(delivered.insert(key).inserted, "a message decrypted twice")
                return .success(result.plaintext)
            } catch {
                invariant(allowed.contains(error), "decrypt threw \(error), not a SPEC §4 receiver error")
                invariant(records[party].serialized() == before, "record changed after \(error)")
                invariant(randoms[party].draws == draws, "a failed decryption drew from the random source")
                if let decoding = WireReference.expectedError(message) {
                    invariant(error == decoding, "decrypt threw \(error), the reference decoder says \(decoding)")
                }
                return .failure(error)
            }
        }

        /// Delivers an authentic message and compares with the model.
        func deliverAuthentic(_ item: Sent) {
            let receiver = 1 - item.from
            let ratchet = header(item.bytes)
            var model = models[receiver]
            let expected = model.deliver(dh: ratchet.ratchetKey.rawRepresentation, pn: Int(ratchet.previousCounter), n: Int(ratchet.counter))
            let result = deliver(item.bytes, to: receiver)
            switch (expected, result) {
            case (.success, .success(let plaintext)):
                invariant(plaintext == item.plaintext, "decrypted to another plaintext")
                models[receiver] = model
            case (.error(let predicted), .failure(let actual)):
                if let predicted { invariant(predicted == actual, "model predicts \(predicted), receiver threw \(actual)") }
            default:
                fail("model predicts \(expected), receiver gave \(result) (n=\(ratchet.counter), pn=\(ratchet.previousCounter))")
            }
        }

        while !input.isAtEnd, operations < 48 {
            operations += 1
            let op = input.byte() % 8
            switch op {
            case 0, 1:
                encrypt(Int(op), input.chunk())
            case 2:
                let spec = input.byte()
                for index in 0 ..< Int(spec >> 1) % 24 + 1 { encrypt(Int(spec & 1), [UInt8(truncatingIfNeeded: index)]) }
            case 3:
                let choice = Int(input.u16())
                guard !sent.isEmpty else { continue }
                deliverAuthentic(sent[choice % sent.count])
            case 4, 5:
                let choice = Int(input.u16())
                let position = Int(input.u16())
                let flip = input.byte()
                guard !sent.isEmpty else { continue }
                let item = sent[choice % sent.count]
                var altered = item.bytes
                if op == 4 {
                    altered[position % altered.count] ^= flip == 0 ? 0x01 : flip
                } else {
                    altered = Array(altered.prefix(position % altered.count))
                }
                if case .success = deliver(altered, to: 1 - item.from) { fail("an altered message decrypted (op \(op))") }
            case 6:
                let party = Int(input.byte() & 1)
                let raw = input.chunk()
                if case .success(let plaintext) = deliver(raw, to: party) {
                    guard let item = sent.first(where: { $0.bytes == raw && $0.from != party }) else {
                        fail("raw bytes decrypted without being a message sent to this party")
                    }
                    invariant(plaintext == item.plaintext, "raw copy decrypted to another plaintext")
                    let ratchet = header(raw)
                    invariant(models[party].deliver(dh: ratchet.ratchetKey.rawRepresentation, pn: Int(ratchet.previousCounter),
                                                    n: Int(ratchet.counter)) == .success, "raw copy decrypted against the model")
                }
            default:
                let party = Int(input.byte() & 1)
                let blob = records[party].serialized()
                do {
                    let reloaded = try SessionRecord(serialized: blob)
                    invariant(reloaded.serialized() == blob, "reloaded record serializes differently")
                    records[party] = reloaded
                } catch {
                    fail("a record the library wrote does not load: \(error)")
                }
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for base in UInt8(0) ..< 8 {
            // Ping-pong in order.
            seeds.append([base, 0] + chunk(Array("a1".utf8)) + [3, 0, 0] + [1] + chunk(Array("b1".utf8)) + [3, 0, 1]
                         + [0] + chunk(Array("a2".utf8)) + [3, 0, 2] + [7, 0] + [7, 1])
            // A burst delivered out of order, with a replay, a tamper and a truncation.
            seeds.append([base, 2, 20, 3, 0, 9, 3, 0, 2, 3, 0, 9, 3, 0, 0, 4, 0, 3, 0, 45, 0x10, 5, 0, 4, 0, 60, 0])
            // Both sides burst, interleaved deliveries across DH steps.
            seeds.append([base, 2, 14, 2, 15, 3, 0, 7, 3, 0, 8, 3, 0, 3, 3, 0, 12, 3, 0, 1, 3, 0, 14, 7, 1])
            // Skips beyond MAX_SKIP and eviction.
            seeds.append([base, 2, 46, 2, 46, 3, 0, 40, 3, 0, 20, 3, 0, 5, 3, 0, 30])
        }
        seeds.append([0, 6, 1] + chunk([0x21] + [UInt8](repeating: 0xff, count: 60)))
        seeds.append([1, 6, 1] + chunk([0x22] + [UInt8](repeating: 0x00, count: 140)))
        seeds.append([5, 6, 1] + chunk([0x22] + [UInt8](repeating: 0x00, count: 68) + [0x02] + [UInt8](repeating: 0x00, count: 1160)))
        return seeds
    }
}
