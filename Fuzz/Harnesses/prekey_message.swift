// Harness `prekey_message`: a responder receiving prekey messages (SPEC §3–§4) into a
// `SessionRecord`, with its prekeys: signed prekey 7, one-time prekeys 1, 2, 3.
//
// Two initiators (fixed identities) and four fixed ephemeral keys EK_A. The harness builds
// initiator sessions from bundles whose prekey ids may be wrong on purpose (an unknown
// signed prekey id, an unknown or already used one-time prekey id, or the id of another
// one-time prekey than the key used), so messages hit every branch of the responder. A model
// predicts each outcome: the session created from the same EK_A takes the message (its IK_A,
// spk_id and one-time-prekey part must equal the creating ones, else `invalidMessage`),
// otherwise X3DH runs (`unknownPreKey` for ids not held; a mislabelled key fails the tag,
// `invalidMessage`, unless the counter is beyond MAX_SKIP first), and on a session the
// counter decides (duplicate, skipped, too many skipped). Invariants:
//   - every outcome matches the model, successes with the plaintext sent;
//   - a one-time prekey is reported consumed exactly when X3DH succeeds with it, and only once;
//   - every error is a SPEC §4 receiver error; after any error the serialized record is
//     unchanged, nothing was drawn from the random source and no prekey is reported consumed;
//   - the record persists and reloads to the same bytes.
//
// The first input byte picks the limits: MAX_SKIP 5 / MAX_STORED 8, or SPEC's 256 / 2000.
import SessionKit
import SignalPrimitives

enum Harness {
    static let setup = CountingRandomSource(seed: 0x9E4E)
    static func must<T>(_ body: () throws -> T) -> T {
        do { return try body() } catch { fail("setup failed: \(error)") }
    }
    static let bob: IdentityKeyPair = must { try IdentityKeyPair(seed: fixedBytes(32, seed: 0xB0B)) }
    static let alices: [IdentityKeyPair] = must { try [IdentityKeyPair(seed: fixedBytes(32, seed: 0xA1)), IdentityKeyPair(seed: fixedBytes(32, seed: 0xA2))] }
    static let signed: SignedPreKey = must {
        let key = fixedBytes(32, seed: 0x5B)
        let signature = bob.signature(forSignedPreKey: try X25519.PrivateKey(rawRepresentation: key).publicKey)
        return try SignedPreKey(id: 7, privateKey: key, signature: signature)
    }
    static let signature: [UInt8] = signed.signature
    static let oneTime: [OneTimePreKey] = must { try (1 ... 3).map { try OneTimePreKey(id: UInt32($0), privateKey: fixedBytes(32, seed: 0x0700 + UInt64($0))) } }
    static let ephemeral: [X25519.PrivateKey] = must { try (0 ..< 4).map { try X25519.PrivateKey(rawRepresentation: fixedBytes(32, seed: 0xE0 + UInt64($0))) } }
    static let configurations: [SessionConfiguration] = must { [try SessionConfiguration(maxSkip: 5, maxStored: 8), .default] }
    static let allowed: Set<SessionError> = [.unsupportedVersion, .invalidMessage, .invalidKey, .noSession, .unknownPreKey,
                                             .duplicateMessage, .tooManySkippedMessages, .invalidPadding]

    /// One initiator session and what the responder should make of it.
    struct Initiator {
        var session: SessionState
        let alice: Int
        let ek: Int
        let prefix: PreKeyMessage.Prefix
        let decryptable: Bool    // the bundle's labels name the keys actually used
    }

    struct Sent {
        let initiator: Int
        let bytes: [UInt8]
        let plaintext: [UInt8]
        let counter: Int
    }

    /// The responder's session created from one EK_A: its creating prefix and initiator, and
    /// its single receiving chain (initiators here never get a reply, so they never turn the
    /// ratchet): next counter and skipped counters in insertion order.
    struct ResponderSession {
        let prefix: PreKeyMessage.Prefix
        let initiator: Int
        var next: Int
        var skipped: [Int]
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let configuration = configurations[Int(input.byte()) % configurations.count]
        var record = SessionRecord()
        var preKeys = PreKeySet(signedPreKeys: [signed], oneTimePreKeys: oneTime)
        var initiators: [Initiator] = []
        var sent: [Sent] = []
        var responder: [[UInt8]: ResponderSession] = [:]      // by EK_A
        var consumed = Set<UInt32>()
        let random = CountingRandomSource(seed: 77)
        var operations = 0

        func deliver(_ message: [UInt8]) -> Result<SessionRecord.Decryption, SessionError> {
            let before = record.serialized()
            let draws = random.draws
            do {
                let result = try record.decrypt(message, identity: bob, preKeys: preKeys, configuration: configuration, random: random)
                if let id = result.consumedOneTimePreKeyID {
                    invariant(result.establishedSession, "a prekey consumed without a new session")
                    invariant(consumed.insert(id).inserted, "one-time prekey \(id) consumed twice")
                    preKeys.removeOneTimePreKey(id: id)
                }
                return .success(result)
            } catch {
                invariant(allowed.contains(error), "decrypt threw \(error), not a SPEC §4 receiver error")
                invariant(record.serialized() == before, "record changed after \(error)")
                invariant(random.draws == draws, "a failed decryption drew from the random source")
                return .failure(error)
            }
        }

        enum Expected: Equatable { case success(established: Bool), error(SessionError?) }

        func predict(_ item: Sent) -> (Expected, ResponderSession?) {
            let initiator = initiators[item.initiator]
            let ek = initiator.prefix.baseKey.rawRepresentation
            let maxSkip = configuration.maxSkip
            if var session = responder[ek] {
                guard session.prefix == initiator.prefix else { return (.error(.invalidMessage), nil) }
                guard session.initiator == item.initiator else { return (.error(nil), nil) }
                if item.counter < session.next {
                    guard let index = session.skipped.firstIndex(of: item.counter) else { return (.error(.duplicateMessage), nil) }
                    session.skipped.remove(at: index)
                    return (.success(established: false), session)
                }
                guard item.counter - session.next <= maxSkip else { return (.error(.tooManySkippedMessages), nil) }
                session.skipped.append(contentsOf: session.next ..< item.counter)
                if session.skipped.count > configuration.maxStored { session.skipped.removeFirst(session.skipped.count - configuration.maxStored) }
                session.next = item.counter + 1
                return (.success(established: false), session)
            }
            guard initiator.prefix.signedPreKeyID == 7 else { return (.error(.unknownPreKey), nil) }
            if let id = initiator.prefix.oneTimePreKeyID, preKeys.oneTimePreKey(id: id) == nil { return (.error(.unknownPreKey), nil) }
            guard item.counter <= maxSkip else { return (.error(.tooManySkippedMessages), nil) }
            guard initiator.decryptable else { return (.error(.invalidMessage), nil) }
            var skipped = Array(0 ..< item.counter)
            if skipped.count > configuration.maxStored { skipped.removeFirst(skipped.count - configuration.maxStored) }
            return (.success(established: true), ResponderSession(prefix: initiator.prefix, initiator: item.initiator,
                                                                  next: item.counter + 1, skipped: skipped))
        }

        func deliverAuthentic(_ item: Sent) {
            let (expected, next) = predict(item)
            let result = deliver(item.bytes)
            switch (expected, result) {
            case (.success(let established), .success(let decryption)):
                invariant(decryption.plaintext == item.plaintext, "decrypted to another plaintext")
                invariant(decryption.establishedSession == established, "established \(decryption.establishedSession), model \(established)")
                invariant(decryption.consumedOneTimePreKeyID == (established ? initiators[item.initiator].prefix.oneTimePreKeyID : nil),
                          "consumed \(String(describing: decryption.consumedOneTimePreKeyID))")
                responder[initiators[item.initiator].prefix.baseKey.rawRepresentation] = next
            case (.error(let predicted), .failure(let actual)):
                if let predicted { invariant(predicted == actual, "model predicts \(predicted), responder threw \(actual)") }
            default:
                fail("model predicts \(expected), responder gave \(result)")
            }
        }

        func send(_ index: Int, _ plaintext: [UInt8]) -> Sent? {
            guard sent.count < 300 else { return nil }
            do {
                let message = try initiators[index].session.encrypt(plaintext)
                let counter = Int(try IncomingMessage(serialized: message).ratchetMessage.counter)
                let item = Sent(initiator: index, bytes: message, plaintext: plaintext, counter: counter)
                sent.append(item)
                return item
            } catch {
                fail("encrypt threw \(error)")
            }
        }

        while !input.isAtEnd, operations < 40 {
            operations += 1
            switch input.byte() % 7 {
            case 0:
                guard initiators.count < 12 else { continue }
                let spec = input.byte()
                let opk = input.byte()
                let alice = Int(spec & 1)
                let ek = Int(spec >> 1) & 3
                let spkID: UInt32 = spec & 0x08 != 0 ? 8 : 7
                var oneTimeKey: PreKeyBundle.OneTimeKey?
                var decryptable = true
                if opk & 0x80 == 0 {
                    let label: UInt32 = [1, 2, 3, 9][Int(opk & 3)]
                    let keyIndex = Int(opk >> 2) % 3
                    oneTimeKey = PreKeyBundle.OneTimeKey(id: label, publicKey: oneTime[keyIndex].publicKey)
                    decryptable = label == UInt32(keyIndex + 1)
                }
                let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: spkID, signedPreKey: signed.publicKey,
                                          signedPreKeySignature: signature, oneTimePreKey: oneTimeKey)
                do {
                    let session = try SessionState(initiatingWith: bundle, identity: alices[alice], ephemeralKey: ephemeral[ek],
                                                   configuration: configuration,
                                                   random: CountingRandomSource(seed: UInt64(initiators.count) + 1000))
                    initiators.append(Initiator(session: session, alice: alice, ek: ek, prefix: session.preKeyPrefix, decryptable: decryptable))
                } catch {
                    fail("initiating from a well-formed bundle threw \(error)")
                }
                if let item = send(initiators.count - 1, input.chunk()) { deliverAuthentic(item) }
            case 1:
                let index = Int(input.byte())
                let plaintext = input.chunk()
                guard !initiators.isEmpty else { continue }
                _ = send(index % initiators.count, plaintext)
            case 2:
                let index = Int(input.u16())
                guard !sent.isEmpty else { continue }
                deliverAuthentic(sent[index % sent.count])
            case 3:
                let index = Int(input.u16())
                let position = Int(input.u16())
                let flip = input.byte()
                guard !sent.isEmpty else { continue }
                var altered = sent[index % sent.count].bytes
                altered[position % altered.count] ^= flip == 0 ? 0x01 : flip
                if case .success = deliver(altered) { fail("a tampered prekey message decrypted") }
            case 4:
                let raw = input.chunk()
                if case .success = deliver(raw) {
                    guard let item = sent.first(where: { $0.bytes == raw }) else { fail("raw bytes decrypted without being sent") }
                    let (expected, next) = predict(item)
                    guard case .success = expected else { fail("raw copy decrypted against the model") }
                    responder[initiators[item.initiator].prefix.baseKey.rawRepresentation] = next
                }
            case 5:
                let blob = record.serialized()
                do {
                    let reloaded = try SessionRecord(serialized: blob)
                    invariant(reloaded.serialized() == blob, "reloaded record serializes differently")
                    record = reloaded
                } catch {
                    fail("a record the library wrote does not load: \(error)")
                }
            default:
                let index = Int(input.byte())
                let count = Int(input.byte() % 12) + 1
                guard !initiators.isEmpty else { continue }
                for round in 0 ..< count { _ = send(index % initiators.count, [UInt8(round)]) }
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        let hi = chunk(Array("hi".utf8))
        var seeds: [[UInt8]] = []
        for limits in UInt8(0) ..< 2 {
            // With one-time prekey 1, then without one, then a replay and a persisted record.
            seeds.append([limits, 0, 0b0000, 0b0000_0000] + hi + [0, 0b0011, 0x80] + hi + [2, 0, 0, 5])
            // Unknown signed prekey id, unknown one-time id, mislabelled key, consumed key reused.
            seeds.append([limits, 0, 0b1000, 0] + hi + [0, 0b0010, 0b0000_0011] + hi + [0, 0b0100, 0b0000_0101] + hi
                         + [0, 0b0110, 0] + hi + [0, 0b0111, 0] + hi)
            // Same EK_A, other prefix; then a burst out of order; tamper; raw.
            seeds.append([limits, 0, 0, 0x80] + hi + [0, 1, 0x80] + hi + [6, 0, 9, 2, 0, 5, 2, 0, 3, 2, 0, 11, 3, 0, 1, 0, 70, 0x40])
        }
        seeds.append([0, 4] + chunk([0x02] + [UInt8](repeating: 0, count: 130)))
        seeds.append([0, 4] + chunk([0x02] + [UInt8](repeating: 0x11, count: 68) + [0x02] + [UInt8](repeating: 1, count: 60)))
        return seeds
    }
}
