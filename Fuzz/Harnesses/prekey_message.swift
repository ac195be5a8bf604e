// Harness `prekey_message`: a responder receiving v2 prekey messages (SPEC §3–§4), with the KEM
// part, through `SessionRecord.decrypt`, holding real prekeys (`LocalPreKeys`): signed prekey 1
// (signed with `kem` = 0), signed prekey 2 (`kem` = 1, with last-resort KEM prekey 1), one-time
// prekeys 1, 2, 3 and one-time KEM prekeys 2, 3. The KEM is `StandInKEM` (FuzzSupport.swift):
// the harness tests SessionKit's handling of the KEM part, not ML-KEM.
//
// The responder (Bob) keeps one `SessionRecord` per sender address: Alice's device 1 and her
// device 2. Initiators (two identities, four fixed EK_A, sending from either device) start
// from bundles that the harness builds and signs (with the `kem` bit matching the presence of
// a KEM prekey, so every bundle verifies) but whose ids may be wrong on purpose: an unknown
// signed, one-time or KEM prekey id, the id of another key than the one used, a classic
// message to the signed prekey signed with `kem` = 1 (the stripped-KEM rule). Messages are
// delivered to the record of the address they were sent from, or re-attributed to the other
// one. A model written from SPEC §3–§4 predicts every outcome: the session of that record
// created from the same EK_A takes the message (its whole prefix must equal the creating one,
// else `invalidMessage`; a previous session that decrypts becomes current); otherwise, in
// SPEC §3's order, spk_id (`unknownPreKey`), the EK_A replay record (`duplicateMessage`),
// opk_id, kem_id (`unknownPreKey`), the stripped-KEM rule (`invalidMessage`, or
// `postQuantumRequired` when post-quantum sessions are required; accepted when classic
// sessions are allowed during a migration), `postQuantumRequired`, `kemUnavailable` (a
// responder without a KEM), the counter (`tooManySkippedMessages` beyond MAX_SKIP), then X3DH
// and the tag: success exactly when every id names the key used and the address is the
// sender's, else `invalidMessage`. Invariants:
//   - every outcome matches the model, successes with the plaintext sent, the right
//     `consumption` (spk_id, EK_A, the one-time prekey, the one-time KEM prekey but never the
//     last-resort one) exactly when X3DH ran, `promotedPreviousSession` as the model says, and
//     the sender's identity key; applying the consumption to the prekeys succeeds;
//   - garbage never creates a session: tampered, truncated and raw inputs never decrypt unless
//     they are byte-for-byte a message that was sent (then as the model says); decoding
//     errors are exactly those of the reference decoder `WireReference`;
//   - after any error every record's serialization, the prekeys' serialization (one-time and
//     KEM prekeys, replay records) and the random source are unchanged; every error is a
//     receiver error of SPEC §4 or the library's `postQuantumRequired` / `kemUnavailable`;
//   - the records hold exactly the sessions of the model, the current one as the model says;
//     records and prekeys persist and reload to the same bytes; the prekeys hold exactly the
//     model's one-time prekeys, KEM prekeys and replay records.
//
// The first input byte picks the responder's configuration: bit 0 limits (MAX_SKIP 5 /
// MAX_STORED 8, or SPEC's 256 / 2000), bit 1 no KEM, bit 2 classic sessions allowed during a
// migration, bit 3 post-quantum sessions required.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let kem = StandInKEM()
    static let bob = must { try IdentityKeyPair(seed: fixedBytes(32, seed: 0xB0B)) }
    static let alices = must { try [IdentityKeyPair(seed: fixedBytes(32, seed: 0xA1)), IdentityKeyPair(seed: fixedBytes(32, seed: 0xA2))] }
    static let addresses = [Addresses.alice, Addresses.aliceOther]
    static let ephemeral = must { try (0 ..< 4).map { try X25519.PrivateKey(rawRepresentation: fixedBytes(32, seed: 0xE0 + UInt64($0))) } }
    static let start = Timestamp(secondsSince1970: 1_700_000_000)

    /// Signed prekey 1 (`kem` = 0), signed prekey 2 (`kem` = 1, last-resort KEM prekey 1),
    /// one-time prekeys 1–3, one-time KEM prekeys 2–3.
    static let basePreKeys: LocalPreKeys = must("prekeys") {
        let random = CountingRandomSource(seed: 0x9E4E)
        let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 3, oneTimePreKeyLowWaterMark: 1)
        var keys = try LocalPreKeys(identity: bob, now: start, policy: policy, random: random)
        try keys.rotateSignedPreKey(identity: bob, now: start.adding(seconds: 60), kem: kem, random: random)
        _ = try keys.generateOneTimeKEMPreKeys(count: 2, identity: bob, kem: kem, random: random)
        invariant(keys.signedPreKey(id: 1)?.signsKEMPreKeys == false && keys.signedPreKey(id: 2)?.signsKEMPreKeys == true, "harness: SPK ids")
        invariant(keys.oneTimePreKeys.map(\.id) == [1, 2, 3], "harness: OPK ids")
        invariant(keys.kemPreKey(id: 1)?.kind == .lastResort && keys.oneTimeKEMPreKeys.map(\.id) == [2, 3], "harness: KEM ids")
        return keys
    }
    static let spkKeys: [UInt32: X25519.PublicKey] = must { [1: try key(basePreKeys.signedPreKey(id: 1)?.publicKey), 2: try key(basePreKeys.signedPreKey(id: 2)?.publicKey)] }
    static let opkKeys: [UInt32: X25519.PublicKey] = must { Dictionary(uniqueKeysWithValues: try (1 ... 3).map { (UInt32($0), try key(basePreKeys.oneTimePreKey(id: UInt32($0))?.publicKey)) }) }
    static let kemKeys: [UInt32: PreKeyBundle.KEMKey] = must {
        Dictionary(uniqueKeysWithValues: try (1 ... 3).map { (UInt32($0), PreKeyBundle.KEMKey(try key(basePreKeys.kemPreKey(id: UInt32($0))))) })
    }
    /// Bob's signatures of SPK 1 and 2 with `kem` = 0 and 1 (SPEC §3), indexed [id][kem].
    static let spkSignatures: [UInt32: [[UInt8]]] = Dictionary(uniqueKeysWithValues: spkKeys.map { id, key in
        (id, [0, 1].map { bit in bob.privateKey.signature(for: Array("SessionKit SPK v2".utf8) + [0x05] + key.rawRepresentation + [UInt8(bit)]) })
    })

    static func key<T>(_ value: T?) throws -> T {
        guard let value else { throw SessionError.invalidConfiguration("harness: missing prekey") }
        return value
    }

    static let allowed: Set<SessionError> = [.unsupportedVersion, .invalidMessage, .invalidKey, .noSession, .unknownPreKey,
                                             .duplicateMessage, .tooManySkippedMessages, .invalidPadding,
                                             .postQuantumRequired, .kemUnavailable]

    /// One initiator session and what the responder should make of it.
    struct Initiator {
        var session: SessionState
        let alice: Int
        let from: Int                 // index into `addresses`
        let prefix: PreKeyMessage.Prefix
        let keysMatchLabels: Bool     // every id in the bundle names the key actually used
    }

    struct Sent {
        let initiator: Int
        let bytes: [UInt8]
        let plaintext: [UInt8]
        let counter: Int
    }

    /// The responder's session created from one EK_A in one record: its creating prefix and
    /// initiator, and its single receiving chain (initiators here never get a reply, so they
    /// never turn the ratchet): next counter and skipped counters in insertion order.
    struct ResponderSession {
        let prefix: PreKeyMessage.Prefix
        let initiator: Int
        var next: Int
        var skipped: [Int]
    }

    enum Expected: Equatable {
        case success(established: Bool, promoted: Bool)
        case error(SessionError?)     // nil: some error
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let settings = input.byte()
        let configuration = must {
            try SessionConfiguration(maxSkip: settings & 1 == 0 ? 5 : 256, maxStored: settings & 1 == 0 ? 8 : 2000,
                                     requirePostQuantum: settings & 8 != 0, allowsClassicSessionsDuringMigration: settings & 4 != 0)
        }
        let responderKEM: StandInKEM? = settings & 2 == 0 ? kem : nil
        var records = [SessionRecord(), SessionRecord()]
        var preKeys = basePreKeys
        var preKeyRecords = Set<BaseKeyRecord>()                  // the EK_A records, kept as a store keeps them
        var initiators: [Initiator] = []
        var sent: [Sent] = []
        // The model.
        var sessions: [[[UInt8]: ResponderSession]] = [[:], [:]]   // per record, by EK_A
        var current: [[UInt8]?] = [nil, nil]
        var heldOneTime: Set<UInt32> = [1, 2, 3]
        var heldKEM: Set<UInt32> = [1, 2, 3]
        var recorded: Set<[UInt8]> = []                           // u32(spk_id) || EK_A
        let random = CountingRandomSource(seed: 77)
        var operations = 0

        func checkRecords() {
            for target in 0 ..< 2 {
                let record = records[target]
                let count = (record.currentSession == nil ? 0 : 1) + record.previousSessions.count
                invariant(count == sessions[target].count, "record \(target) holds \(count) sessions, the model \(sessions[target].count)")
                invariant(record.currentSession?.baseKey.rawRepresentation == current[target], "record \(target)'s current session")
                for (_, session) in sessions[target] {
                    invariant(record.holdsSession(createdBy: session.prefix), "record \(target) lost a session")
                }
            }
        }

        func checkPreKeys() {
            for id in UInt32(1) ... 4 {
                invariant((preKeys.oneTimePreKey(id: id) != nil) == heldOneTime.contains(id), "one-time prekey \(id) held or not")
                invariant((preKeys.kemPreKey(id: id) != nil) == heldKEM.contains(id), "KEM prekey \(id) held or not")
            }
            for spk in UInt32(1) ... 2 {
                for ek in ephemeral {
                    invariant(preKeyRecords.contains(BaseKeyRecord(signedPreKeyID: spk, baseKey: ek.publicKey))
                                  == recorded.contains(u32(spk) + ek.publicKey.rawRepresentation),
                              "replay record of spk \(spk)")
                }
                invariant(preKeys.recordedBaseKeyCount(signedPreKeyID: spk) == recorded.filter { Array($0.prefix(4)) == u32(spk) }.count,
                          "the prekeys count the records of spk \(spk)")
            }
        }

        func deliver(_ message: [UInt8], to target: Int) -> Result<SessionRecord.Decryption, SessionError> {
            let before = records.map { $0.serialized() }
            let preKeysBefore = preKeys.serialized()
            let recordsBefore = preKeyRecords
            let draws = random.draws
            do {
                let result = try records[target].decrypt(message, identity: bob, localAddress: Addresses.bob, remoteAddress: addresses[target],
                                                         preKeys: preKeys.lookup(recording: preKeyRecords), kem: responderKEM,
                                                         configuration: configuration, random: random)
                invariant(records[1 - target].serialized() == before[1 - target], "another record changed")
                if let consumption = result.consumption {
                    do { try preKeys.apply(consumption) } catch { fail("applying \(consumption) threw \(error)") }
                    let added = preKeyRecords.insert(BaseKeyRecord(signedPreKeyID: consumption.signedPreKeyID, baseKey: consumption.baseKey))
                    invariant(added.inserted, "X3DH completed with an EK_A already recorded under its signed prekey")
                }
                return .success(result)
            } catch {
                invariant(allowed.contains(error), "decrypt threw \(error), not a SPEC §4 receiver error")
                invariant(records.map { $0.serialized() } == before, "a record changed after \(error)")
                invariant(preKeys.serialized() == preKeysBefore, "the prekeys changed after \(error)")
                invariant(preKeyRecords == recordsBefore, "a replay record was added after \(error)")
                invariant(random.draws == draws, "a failed decryption drew from the random source")
                if let decoding = WireReference.expectedError(message) {
                    invariant(error == decoding, "decrypt threw \(error), the reference decoder says \(decoding)")
                }
                return .failure(error)
            }
        }

        func predict(_ item: Sent, to target: Int) -> (Expected, ResponderSession?) {
            let initiator = initiators[item.initiator]
            let prefix = initiator.prefix
            let ek = prefix.baseKey.rawRepresentation
            let maxSkip = configuration.maxSkip
            if var session = sessions[target][ek] {
                guard session.prefix == prefix else { return (.error(.invalidMessage), nil) }
                guard session.initiator == item.initiator else { return (.error(nil), nil) }
                let promoted = current[target] != ek
                if item.counter < session.next {
                    guard let index = session.skipped.firstIndex(of: item.counter) else { return (.error(.duplicateMessage), nil) }
                    session.skipped.remove(at: index)
                    return (.success(established: false, promoted: promoted), session)
                }
                guard item.counter - session.next <= maxSkip else { return (.error(.tooManySkippedMessages), nil) }
                session.skipped.append(contentsOf: session.next ..< item.counter)
                if session.skipped.count > configuration.maxStored { session.skipped.removeFirst(session.skipped.count - configuration.maxStored) }
                session.next = item.counter + 1
                return (.success(established: false, promoted: promoted), session)
            }
            let spk = prefix.signedPreKeyID
            guard spk == 1 || spk == 2 else { return (.error(.unknownPreKey), nil) }
            guard !recorded.contains(u32(spk) + ek) else { return (.error(.duplicateMessage), nil) }
            if let id = prefix.oneTimePreKeyID, !heldOneTime.contains(id) { return (.error(.unknownPreKey), nil) }
            if let part = prefix.kem, !heldKEM.contains(part.preKeyID) { return (.error(.unknownPreKey), nil) }
            if prefix.kem == nil {
                if spk == 2, !(configuration.allowsClassicSessionsDuringMigration && !configuration.requirePostQuantum) {
                    return (.error(configuration.requirePostQuantum ? .postQuantumRequired : .invalidMessage), nil)
                }
                if configuration.requirePostQuantum { return (.error(.postQuantumRequired), nil) }
            } else if responderKEM == nil {
                return (.error(.kemUnavailable), nil)
            }
            guard item.counter <= maxSkip else { return (.error(.tooManySkippedMessages), nil) }
            guard initiator.keysMatchLabels, initiator.from == target else { return (.error(.invalidMessage), nil) }
            var skipped = Array(0 ..< item.counter)
            if skipped.count > configuration.maxStored { skipped.removeFirst(skipped.count - configuration.maxStored) }
            return (.success(established: true, promoted: false),
                    ResponderSession(prefix: prefix, initiator: item.initiator, next: item.counter + 1, skipped: skipped))
        }

        /// Applies a predicted success to the model and checks what the library reported.
        func accept(_ item: Sent, to target: Int, _ expected: Expected, _ next: ResponderSession?, _ decryption: SessionRecord.Decryption) {
            guard case let .success(established, promoted) = expected, let next else { fail("model: no success to accept") }
            let initiator = initiators[item.initiator]
            let prefix = initiator.prefix
            invariant(decryption.plaintext == item.plaintext, "decrypted to another plaintext")
            invariant(decryption.establishedSession == established, "established \(decryption.establishedSession), model \(established)")
            invariant(decryption.promotedPreviousSession == promoted, "promoted \(decryption.promotedPreviousSession), model \(promoted)")
            invariant(decryption.remoteIdentityKey == alices[initiator.alice].publicKey, "another remote identity")
            if established {
                let kemID = prefix.kem?.preKeyID
                let expectedConsumption = PreKeyConsumption(
                    signedPreKeyID: prefix.signedPreKeyID, baseKey: prefix.baseKey, oneTimePreKeyID: prefix.oneTimePreKeyID,
                    oneTimeKEMPreKeyID: kemID == 1 ? nil : kemID)
                invariant(decryption.consumption == expectedConsumption, "consumption \(String(describing: decryption.consumption))")
                if let id = prefix.oneTimePreKeyID { heldOneTime.remove(id) }
                if let id = kemID, id != 1 { heldKEM.remove(id) }
                recorded.insert(u32(prefix.signedPreKeyID) + prefix.baseKey.rawRepresentation)
            } else {
                invariant(decryption.consumption == nil, "a session already held reported a consumption")
            }
            sessions[target][prefix.baseKey.rawRepresentation] = next
            current[target] = prefix.baseKey.rawRepresentation
        }

        func deliverAuthentic(_ item: Sent, to target: Int) {
            let (expected, next) = predict(item, to: target)
            let result = deliver(item.bytes, to: target)
            switch (expected, result) {
            case (.success, .success(let decryption)):
                accept(item, to: target, expected, next, decryption)
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

        func makeInitiator(_ spec: UInt8, _ spkChoice: UInt8, _ opkChoice: UInt8, _ kemChoice: UInt8) -> Initiator {
            let alice = Int(spec & 1)
            let ek = Int(spec >> 1) & 3
            let from = Int(spec >> 3) & 1
            let spkKey = UInt32(spkChoice & 1) + 1
            let spkID: UInt32 = [spkKey, 3 - spkKey, 9, spkKey][Int(spkChoice >> 1) % 4]
            var matches = spkID == spkKey
            var oneTimeKey: PreKeyBundle.OneTimeKey?
            if opkChoice & 0x80 == 0 {
                let keyID = UInt32(opkChoice >> 2) % 3 + 1
                let label: UInt32 = [1, 2, 3, 9][Int(opkChoice & 3)]
                oneTimeKey = must { PreKeyBundle.OneTimeKey(id: label, publicKey: try key(opkKeys[keyID])) }
                matches = matches && label == keyID
            }
            var kemKey: PreKeyBundle.KEMKey?
            var encapsulation: KEMEncapsulation?
            if kemChoice & 0x80 == 0 {
                let keyID = UInt32(kemChoice >> 2) % 3 + 1
                let label: UInt32 = [1, 2, 3, 9][Int(kemChoice & 3)]
                let published = must { try key(kemKeys[keyID]) }
                kemKey = must { try PreKeyBundle.KEMKey(id: label, publicKey: published.publicKey, signature: published.signature) }
                encapsulation = StandInKEM.encapsulate(to: published.publicKey, randomness: [kemChoice & 0x40 == 0 ? 0 : UInt8(initiators.count)])
                matches = matches && label == keyID
            }
            let signature = must { try key(spkSignatures[spkKey]?[kemKey == nil ? 0 : 1]) }
            return must("initiating from a well-formed bundle") {
                let bundle = try PreKeyBundle(identityKey: bob.publicKey, signedPreKeyID: spkID, signedPreKey: try key(spkKeys[spkKey]),
                                              signedPreKeySignature: signature, oneTimePreKey: oneTimeKey, kemPreKey: kemKey)
                let session = try SessionState(initiatingWith: bundle, identity: alices[alice], localAddress: addresses[from],
                                               remoteAddress: Addresses.bob, ephemeralKey: ephemeral[ek], encapsulation: encapsulation,
                                               random: CountingRandomSource(seed: UInt64(initiators.count) + 1000))
                guard let prefix = session.pendingPreKeyPrefix else { throw SessionError.invalidConfiguration("harness: no prefix") }
                return Initiator(session: session, alice: alice, from: from, prefix: prefix, keysMatchLabels: matches)
            }
        }

        while !input.isAtEnd, operations < 40 {
            operations += 1
            switch input.byte() % 8 {
            case 0:
                guard initiators.count < 12 else { continue }
                let initiator = makeInitiator(input.byte(), input.byte(), input.byte(), input.byte())
                initiators.append(initiator)
                if let item = send(initiators.count - 1, input.chunk()) { deliverAuthentic(item, to: initiator.from) }
            case 1:
                let index = Int(input.byte())
                let plaintext = input.chunk()
                guard !initiators.isEmpty else { continue }
                _ = send(index % initiators.count, plaintext)
            case 2:
                let index = Int(input.u16())
                let reattribute = input.byte() & 3 == 3
                guard !sent.isEmpty else { continue }
                let item = sent[index % sent.count]
                let own = initiators[item.initiator].from
                deliverAuthentic(item, to: reattribute ? 1 - own : own)
            case 3, 7:
                let index = Int(input.u16())
                let position = Int(input.u16())
                let flip = input.byte()
                guard !sent.isEmpty else { continue }
                let item = sent[index % sent.count]
                var altered = item.bytes
                if flip & 0x80 != 0 {
                    altered = Array(altered.prefix(position % altered.count))
                } else {
                    altered[position % altered.count] ^= flip == 0 ? 0x01 : flip
                }
                if case .success = deliver(altered, to: initiators[item.initiator].from) { fail("a tampered or truncated prekey message decrypted") }
            case 4:
                let target = Int(input.byte() & 1)
                let raw = input.chunk()
                if case .success(let decryption) = deliver(raw, to: target) {
                    guard let item = sent.first(where: { $0.bytes == raw }) else { fail("raw bytes decrypted without being sent") }
                    let (expected, next) = predict(item, to: target)
                    guard case .success = expected else { fail("raw copy decrypted against the model (\(expected))") }
                    accept(item, to: target, expected, next, decryption)
                }
            case 5:
                for target in 0 ..< 2 {
                    let blob = records[target].serialized()
                    do {
                        let reloaded = try SessionRecord(serialized: blob)
                        invariant(reloaded.serialized() == blob, "reloaded record serializes differently")
                        records[target] = reloaded
                    } catch {
                        fail("a record the library wrote does not load: \(error)")
                    }
                }
                let blob = preKeys.serialized()
                do {
                    let reloaded = try LocalPreKeys(serialized: blob)
                    invariant(reloaded.serialized() == blob, "reloaded prekeys serialize differently")
                    preKeys = reloaded
                } catch {
                    fail("prekeys the library wrote do not load: \(error)")
                }
            default:
                let index = Int(input.byte())
                let count = Int(input.byte() % 12) + 1
                guard !initiators.isEmpty else { continue }
                for round in 0 ..< count { _ = send(index % initiators.count, [UInt8(round)]) }
            }
            checkRecords()
            checkPreKeys()
        }
    }

    static func seeds() -> [[UInt8]] {
        let hi = chunk(Array("hi".utf8))
        var seeds: [[UInt8]] = []
        // Initiator bytes: spec (alice, EK_A, device), spk (key, label), opk, kem.
        let classic: [UInt8] = [0, 0b0000, 0b000, 0x00, 0x80]            // SPK 1, OPK 1, no KEM
        let hybrid: [UInt8] = [0, 0b0010, 0b001, 0x80, 0b0000_0101]       // SPK 2, no OPK, KEM 2
        let lastResort: [UInt8] = [0, 0b0100, 0b001, 0b0000_0101, 0x00]   // SPK 2, OPK 2, KEM 1
        for settings: UInt8 in [0, 1, 2, 4, 8, 12] {
            // Classic, hybrid and last resort; then a replay, a burst, out-of-order deliveries.
            seeds.append([settings] + classic + hi + hybrid + hi + lastResort + hi + [2, 0, 1, 0, 6, 1, 5, 2, 0, 5, 0, 2, 0, 4, 0, 5])
            // Wrong ids: unknown SPK, unknown OPK, mislabelled KEM key, stripped KEM (SPK 2 classic), used OPK.
            seeds.append([settings] + [0, 0b0110, 0b100, 0x80, 0x80] + hi + [0, 0b1000, 0b000, 0x03, 0x80] + hi
                         + [0, 0b0001, 0b001, 0x80, 0b0000_0110] + hi + [0, 0b0011, 0b001, 0x80, 0x80] + hi + classic + hi
                         + [0, 0b0101, 0b000, 0x00, 0x80] + hi)
            // Same EK_A with another prefix; re-attributed; tampered; truncated; persisted.
            seeds.append([settings] + hybrid + hi + [0, 0b0010, 0b001, 0x80, 0b0100_0101] + hi + [2, 0, 0, 3, 3, 0, 0, 0, 80, 0x40]
                         + [7, 0, 0, 0, 200, 0x80] + [5])
        }
        seeds.append([0, 4, 0] + chunk([0x22] + [UInt8](repeating: 0, count: 130)))
        seeds.append([0, 4, 1] + chunk([0x22] + [UInt8](repeating: 0x11, count: 68) + [0x02] + [UInt8](repeating: 1, count: 1160)))
        seeds.append([0, 4, 0] + chunk([0x21] + [UInt8](repeating: 0x09, count: 80)))
        return seeds
    }
}
