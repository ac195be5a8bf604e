// Harness `session_routing`: sessions per address (SPEC §3, v2) — `SessionRecord`'s routing of
// messages between a current session and previous ones, for two parties (Alice at alice.1,
// Bob at bob.7) where Alice starts new sessions (new X3DH from Bob's bundle) while messages of
// the older ones are still in flight.
//
// The first input byte picks the limits (MAX_SKIP 6 / MAX_STORED 9, or 256 / 2000) and a
// classic bundle or one with a last-resort KEM prekey (the stand-in KEM). Then a program: Alice
// starts a new session (at most 6), either party encrypts one or several messages on its
// current session, a sent message is delivered to its recipient or (never decryptable) back to
// its sender, tampered with or truncated, or a record is persisted and reloaded.
//
// A model of each party — its sessions by EK_A, each with a receiver model (SPEC §4's DHr, Nr,
// receiving chain, skipped keys with eviction, chains left), which one is current and the
// previous ones most recent first, and which of Alice's sessions still send prekey messages —
// predicts every delivery from SPEC §3: a prekey message goes to the session of its EK_A,
// wherever it is, or creates one by X3DH, which becomes current; a ratchet message is tried
// on the current session, then on the previous ones, most recent first; a session that knows
// the message's ratchet key decides; on another ratchet key a previous session is tried only
// when it is the most recent previous one and header.pn equals its receiving counter (the
// library's documented bound on forged messages); the first that decrypts becomes current;
// otherwise the current session's error (`noSession` without one). Invariants:
//   - every delivery succeeds exactly when the model says, to the plaintext sent, with
//     `establishedSession` and `promotedPreviousSession` as predicted, and where the deciding
//     session is determined, with its error;
//   - after every operation each record holds exactly the model's sessions, the current one
//     and the previous ones in the model's order; Alice sends prekey messages exactly on the
//     sessions that have not decrypted a reply;
//   - nothing decrypts twice; altered messages and a party's own messages never decrypt; a
//     failed decryption changes neither record nor Bob's prekeys and draws nothing from the
//     random source; records reload to the same bytes.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let kem = StandInKEM()
    static let alice = must { try IdentityKeyPair(seed: fixedBytes(32, seed: 0xA1)) }
    static let bob = must { try IdentityKeyPair(seed: fixedBytes(32, seed: 0xB0B)) }
    static let addresses = [Addresses.alice, Addresses.bob]
    static let identities = [alice, bob]
    /// Bob's prekeys: SPK 7 with `kem` = 0 (classic) and SPK 8 with `kem` = 1 and last-resort
    /// KEM prekey 1; no one-time prekeys, so every new session of Alice's can be accepted.
    static let classicSigned = must { try SignedPreKey(id: 7, privateKey: fixedBytes(32, seed: 0x57), signedBy: bob, signsKEMPreKeys: false) }
    static let hybridSigned = must { try SignedPreKey(id: 8, privateKey: fixedBytes(32, seed: 0x58), signedBy: bob, signsKEMPreKeys: true) }
    static let lastResort = must { try KEMPreKey(id: 1, kind: .lastResort, seed: fixedBytes(64, seed: 0x4B), signedBy: bob, kem: kem) }
    static let bundles = [PreKeyBundle(identityKey: bob.publicKey, signedPreKey: classicSigned, oneTimePreKey: nil),
                          PreKeyBundle(identityKey: bob.publicKey, signedPreKey: hybridSigned, oneTimePreKey: nil, kemPreKey: lastResort)]
    static let configurations = must { [try SessionConfiguration(maxSkip: 6, maxStored: 9), .default] }
    static let allowed: Set<SessionError> = [.unsupportedVersion, .invalidMessage, .invalidKey, .noSession, .unknownPreKey,
                                             .duplicateMessage, .tooManySkippedMessages, .invalidPadding]

    /// One party's sessions as SPEC §3 says a record holds them.
    struct PartyModel {
        var models: [[UInt8]: ReceiverModel] = [:]     // by EK_A
        var current: [UInt8]?
        var previous: [[UInt8]] = []                   // most recent first
        var pending: Set<[UInt8]> = []                 // Alice: sessions still sending prekey messages

        mutating func promote(_ ek: [UInt8]) {
            previous.removeAll { $0 == ek }
            if current == ek { return }
            if let current { previous.insert(current, at: 0) }
            if previous.count > 40 {
                for dropped in previous[40...] { models[dropped] = nil }
                previous.removeLast(previous.count - 40)
            }
            current = ek
        }
    }

    struct Sent {
        let from: Int
        let ek: [UInt8]            // the session pair (EK_A of the X3DH that created both)
        let bytes: [UInt8]
        let plaintext: [UInt8]
        let header: RatchetMessage
    }

    enum Expected: Equatable {
        case success(established: Bool, promoted: Bool)
        case error(SessionError?)     // nil: some error (the current session's, not modelled)
    }

    /// Whether a session knows `dh`: its DHr, or skipped keys stored under it.
    static func recognizes(_ model: ReceiverModel, _ dh: [UInt8]) -> Bool {
        model.dhr == dh || model.stored.contains { $0.dh == dh }
    }

    static func header(_ bytes: [UInt8]) -> RatchetMessage {
        do { return try IncomingMessage(serialized: bytes).ratchetMessage } catch { fail("own message does not decode: \(error)") }
    }

    /// The model's outcome of delivering `item` to `party`, and the receiving session's model
    /// after a success.
    static func predict(_ item: Sent, _ party: PartyModel, configuration: SessionConfiguration) -> (Expected, ReceiverModel?) {
        let dh = item.header.ratchetKey.rawRepresentation
        let pn = Int(item.header.previousCounter)
        let n = Int(item.header.counter)
        let promoted = party.current != item.ek
        if item.bytes.first == 0x22 {
            if var session = party.models[item.ek] {
                // The session created from the same EK_A decides.
                let outcome = session.deliver(dh: dh, pn: pn, n: n)
                guard outcome == .success else { return (outcomeError(outcome), nil) }
                return (.success(established: false, promoted: promoted), session)
            }
            var session = ReceiverModel(dhr: [], hasChain: false, nr: 0, maxSkip: configuration.maxSkip, maxStored: configuration.maxStored)
            let outcome = session.deliver(dh: dh, pn: pn, n: n)
            guard outcome == .success else { return (outcomeError(outcome), nil) }
            return (.success(established: true, promoted: false), session)
        }
        guard var session = party.models[item.ek] else { return (.error(party.current == nil ? .noSession : nil), nil) }
        let knows = recognizes(session, dh)
        if party.current == item.ek {
            let outcome = session.deliver(dh: dh, pn: pn, n: n)
            guard outcome == .success else { return (outcomeError(outcome), nil) }
            return (.success(established: false, promoted: false), session)
        }
        guard let index = party.previous.firstIndex(of: item.ek) else { fail("model: a session neither current nor previous") }
        guard knows || (index == 0 && pn == session.nr) else {
            return (.error(party.current == nil ? .noSession : nil), nil)
        }
        let outcome = session.deliver(dh: dh, pn: pn, n: n)
        guard outcome == .success else {
            // A session that knows the key decides; otherwise the current session's error.
            return (knows ? outcomeError(outcome) : .error(party.current == nil ? .noSession : nil), nil)
        }
        return (.success(established: false, promoted: true), session)
    }

    static func outcomeError(_ outcome: ReceiverModel.Outcome) -> Expected {
        if case let .error(error) = outcome { return .error(error) }
        return .error(nil)
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let settings = input.byte()
        let configuration = configurations[Int(settings & 1)]
        let bundle = bundles[Int(settings >> 1) & 1]
        let spk = bundle.signedPreKey.rawRepresentation
        var records = [SessionRecord(), SessionRecord()]
        var bobPreKeys = PreKeySet(signedPreKeys: [classicSigned, hybridSigned], kemPreKeys: [lastResort])
        var models = [PartyModel(), PartyModel()]
        let randoms = [CountingRandomSource(seed: 11), CountingRandomSource(seed: 12)]
        var sent: [Sent] = []
        var delivered = Set<[UInt8]>()
        var aliceSessions = 0
        var operations = 0

        func checkRecords() {
            for party in 0 ..< 2 {
                let record = records[party]
                invariant(record.currentSession?.baseKey.rawRepresentation == models[party].current, "party \(party): current session")
                invariant(record.previousSessions.map(\.baseKey.rawRepresentation) == models[party].previous,
                          "party \(party): previous sessions \(record.previousSessions.count), model \(models[party].previous.count)")
            }
            invariant(records[0].currentSession?.sendsPreKeyMessages == models[0].current.map { models[0].pending.contains($0) },
                      "Alice's current session sends prekey messages or not")
        }

        func encrypt(_ party: Int, _ plaintext: [UInt8]) {
            guard sent.count < 400 else { return }
            do {
                let message = try records[party].encrypt(plaintext)
                guard let ek = models[party].current else { fail("encrypted without a current session in the model") }
                let prekey = party == 0 && models[0].pending.contains(ek)
                invariant(message.first == (prekey ? 0x22 : 0x21), "party \(party) sent type \(message[0]), model \(prekey ? 0x22 : 0x21)")
                sent.append(Sent(from: party, ek: ek, bytes: message, plaintext: plaintext, header: header(message)))
            } catch {
                invariant(error == .noSession && models[party].current == nil, "encrypt threw \(error)")
            }
        }

        func deliver(_ message: [UInt8], to party: Int) -> Result<SessionRecord.Decryption, SessionError> {
            let before = records.map { $0.serialized() }
            let preKeysBefore = bobPreKeys.recordedBaseKeys
            let draws = randoms[party].draws
            do {
                let result = try records[party].decrypt(message, identity: identities[party], localAddress: addresses[party],
                                                        remoteAddress: addresses[1 - party], preKeys: party == 1 ? bobPreKeys : PreKeySet(),
                                                        kem: kem, configuration: configuration, random: randoms[party])
                invariant(records[1 - party].serialized() == before[1 - party], "the other record changed")
                invariant(result.remoteIdentityKey == identities[1 - party].publicKey, "another remote identity")
                if let consumption = result.consumption {
                    invariant(party == 1, "Alice ran X3DH as a responder")
                    do { try bobPreKeys.apply(consumption) } catch { fail("applying \(consumption) threw \(error)") }
                }
                return .success(result)
            } catch {
                invariant(allowed.contains(error), "decrypt threw \(error), not a SPEC §4 receiver error")
                invariant(records.map { $0.serialized() } == before, "a record changed after \(error)")
                invariant(bobPreKeys.recordedBaseKeys == preKeysBefore, "Bob's replay records changed after \(error)")
                invariant(randoms[party].draws == draws, "a failed decryption drew from the random source")
                if let decoding = WireReference.expectedError(message) {
                    invariant(error == decoding, "decrypt threw \(error), the reference decoder says \(decoding)")
                }
                return .failure(error)
            }
        }

        func deliverAuthentic(_ item: Sent) {
            let receiver = 1 - item.from
            let (expected, next) = predict(item, models[receiver], configuration: configuration)
            let result = deliver(item.bytes, to: receiver)
            switch (expected, result) {
            case (.success(let established, let promoted), .success(let decryption)):
                guard let next else { fail("model: no session after a success") }
                invariant(decryption.plaintext == item.plaintext, "decrypted to another plaintext")
                invariant(decryption.establishedSession == established, "established \(decryption.establishedSession), model \(established)")
                invariant(decryption.promotedPreviousSession == promoted, "promoted \(decryption.promotedPreviousSession), model \(promoted)")
                let key = [UInt8(receiver)] + item.ek + item.header.ratchetKey.rawRepresentation + u32(item.header.counter)
                invariant(delivered.insert(key).inserted, "a message decrypted twice")
                models[receiver].models[item.ek] = next
                models[receiver].promote(item.ek)
                if receiver == 0, item.bytes.first == 0x21 { models[0].pending.remove(item.ek) }
            case (.error(let predicted), .failure(let actual)):
                if let predicted { invariant(predicted == actual, "model predicts \(predicted), receiver threw \(actual)") }
            default:
                fail("model predicts \(expected), receiver gave \(result) (type \(item.bytes[0]), n=\(item.header.counter), pn=\(item.header.previousCounter))")
            }
        }

        while !input.isAtEnd, operations < 48 {
            operations += 1
            let op = input.byte() % 8
            switch op {
            case 0:
                guard aliceSessions < 6 else { continue }
                aliceSessions += 1
                let session = must("a new session") {
                    try SessionState(initiatingWith: bundle, identity: alice, localAddress: Addresses.alice, remoteAddress: Addresses.bob,
                                     kem: kem, configuration: configuration, random: randoms[0])
                }
                let ek = session.baseKey.rawRepresentation
                must("promote a new session") { try records[0].promote(session) }
                models[0].models[ek] = ReceiverModel(dhr: spk, hasChain: false, nr: 0, maxSkip: configuration.maxSkip,
                                                     maxStored: configuration.maxStored)
                models[0].pending.insert(ek)
                models[0].promote(ek)
            case 1, 2:
                encrypt(Int(op) - 1, input.chunk())
            case 3:
                let spec = input.byte()
                for index in 0 ..< Int(spec >> 1) % 16 + 1 { encrypt(Int(spec & 1), [UInt8(truncatingIfNeeded: index)]) }
            case 4:
                let choice = Int(input.u16())
                guard !sent.isEmpty else { continue }
                deliverAuthentic(sent[choice % sent.count])
            case 5:
                let choice = Int(input.u16())
                let position = Int(input.u16())
                let flip = input.byte()
                guard !sent.isEmpty else { continue }
                let item = sent[choice % sent.count]
                var altered = item.bytes
                if flip & 0x80 != 0 {
                    altered = Array(altered.prefix(position % altered.count))
                } else {
                    altered[position % altered.count] ^= flip == 0 ? 0x01 : flip
                }
                if case .success = deliver(altered, to: 1 - item.from) { fail("an altered message decrypted") }
            case 6:
                let party = Int(input.byte() & 1)
                let blob = records[party].serialized()
                do {
                    let reloaded = try SessionRecord(serialized: blob)
                    invariant(reloaded.serialized() == blob, "reloaded record serializes differently")
                    records[party] = reloaded
                } catch {
                    fail("a record the library wrote does not load: \(error)")
                }
            default:
                let choice = Int(input.u16())
                guard !sent.isEmpty else { continue }
                let item = sent[choice % sent.count]
                if case .success = deliver(item.bytes, to: item.from) { fail("a party decrypted its own message") }
            }
            checkRecords()
        }
    }

    static func seeds() -> [[UInt8]] {
        let hi = chunk(Array("hi".utf8))
        var seeds: [[UInt8]] = []
        for settings in UInt8(0) ..< 4 {
            // One session, ping-pong; then a second session while the first one's reply is in
            // flight; the old reply is delivered (a previous session decides), then the new one.
            seeds.append([settings, 0, 1] + hi + [4, 0, 0, 2] + hi + [4, 0, 1, 0, 1] + hi + [2] + hi + [4, 0, 2, 4, 0, 4, 4, 0, 3, 6, 0, 6, 1])
            // Two sessions started at once; bursts delivered across them out of order.
            seeds.append([settings, 0, 3, 4, 0, 3, 9, 4, 0, 0, 4, 0, 5, 3, 8, 4, 0, 7, 4, 0, 2, 4, 0, 9, 4, 0, 1, 5, 0, 3, 0, 50, 0x10, 7, 0, 2])
            // Three sessions, replies on each, DH steps on the most recent previous session.
            seeds.append([settings, 0, 1] + hi + [4, 0, 0, 2] + hi + [4, 0, 1, 1] + hi + [4, 0, 2, 0, 1] + hi + [4, 0, 3, 2] + hi
                         + [4, 0, 4, 3, 7, 4, 0, 8, 4, 0, 6, 4, 0, 5, 0, 1] + hi + [4, 0, 9])
        }
        return seeds
    }
}
