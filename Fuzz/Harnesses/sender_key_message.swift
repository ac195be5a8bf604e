// Harness `sender_key_message`: the sender-key receiver (SPEC §5, v2),
// `SenderKeyReceiverState.decrypt(_:for:from:)`, for group G from sender S (bob.7).
//
// The receiver starts from a fixed state holding two chains of S in G: A (distributed at
// iteration 0) and B (distributed at iteration 3, so iterations 0–2 are
// `messageKeyUnavailable`). The input is a program of operations; the harness forges
// authentic messages itself (SPEC §5 built from the primitives, independently of the
// library's sender: mk, (key, nonce, commit) = HKDF(ZERO32, mk, "SessionKit SenderKey v2", 76),
// AES-GCM with aad = 0x24 || Encode(G) || Encode(S) || chain_id || u32(iteration) || commit,
// Ed25519 over Encode(G) || Encode(S) || the message), so the fuzzer reaches everything behind
// the signature, the commitment and the tag. A model of the chain (next iteration, skipped
// iterations, the start iteration, MAX_SKIP 256, MAX_STORED 2000 oldest-first eviction)
// predicts each outcome. Invariants checked on every operation:
//   - errors are SPEC §5 errors, and exactly the one predicted where the SPEC fixes it: the
//     order type, length (149), chain, signature, iteration (skipped key; below the start
//     `messageKeyUnavailable`; else `duplicateMessage`; beyond MAX_SKIP
//     `tooManySkippedMessages`), commitment, tag (`invalidMessage`), padding (`invalidPadding`);
//   - a message forged with a wrong commitment, or under a wrong key with its own commitment,
//     or with the right commitment but a wrong key, fails with `invalidMessage` once the
//     iteration checks pass; one decrypted for another group or from another sender (a
//     relabeled or re-attributed message) fails with `invalidSignature`;
//   - after an error the serialized state is byte-for-byte what it was before;
//   - a success returns the plaintext that was sent, and never twice for one (chain, iteration);
//   - the state's iteration and skipped-key count equal the model's;
//   - persisting and reloading the state gives the same bytes.
//
// Operations (op byte mod 7): 0 forge a message, 1 replay an earlier one, 2 flip one byte of
// an earlier one, 3 truncate an earlier one, 4 deliver raw bytes, 5 persist and reload,
// 6 deliver an earlier one for another group or from another sender.
@_spi(Testing) import SessionKit
import SignalPrimitives

/// A sender-key chain rebuilt from SPEC §5's formulas with the primitives.
struct ForgedChain {
    static let keyCount = 4096
    static let group = Array("fuzz group".utf8)
    static let groupEncoding = [UInt8(group.count)] + group
    static let senderEncoding = encodeAddress(uid: "bob", device: 7)
    let chainID: [UInt8]
    let signingKey: Ed25519.PrivateKey
    /// Chain keys at iterations 0 ..< keyCount.
    let chainKeys: [[UInt8]]

    init(seed: UInt64) {
        let initial = fixedBytes(32, seed: seed)
        // Harness-fixed seeds of the right length: construction cannot fail.
        guard let signing = try? Ed25519.PrivateKey(seed: fixedBytes(32, seed: seed &+ 1)) else { fail("signing key") }
        signingKey = signing
        chainID = SHA256.hash(initial)
        var keys = [initial]
        keys.reserveCapacity(Self.keyCount)
        while keys.count < Self.keyCount {
            keys.append(HMACSHA256.authenticationCode(for: [0x02], using: keys[keys.count - 1]))
        }
        chainKeys = keys
    }

    /// The distribution message at `iteration` (SPEC §5 layout).
    func distribution(at iteration: Int) -> [UInt8] {
        [0x23] + Self.groupEncoding + chainID + u32(UInt32(iteration)) + chainKeys[iteration] + signingKey.publicKey.rawRepresentation
    }

    /// How a forged message departs from an authentic one.
    enum Forgery { case none, wrongKey, wrongCommitment, wrongKeyRightCommitment }

    /// (key, nonce, commit) of SPEC §5 for the message key `mk`.
    static func material(_ mk: [UInt8]) -> [UInt8] {
        guard let material = try? HKDF.deriveKey(inputKeyMaterial: mk, salt: [UInt8](repeating: 0, count: 32),
                                                 info: Array("SessionKit SenderKey v2".utf8), outputByteCount: 76) else { fail("HKDF") }
        return material
    }

    /// An authentic message at `iteration` carrying `padded` (valid padding or not), or a
    /// forgery (the signature is valid in every case).
    func message(iteration: UInt32, padded: [UInt8], forgery: Forgery = .none) -> [UInt8] {
        let header = [0x24] + chainID + u32(iteration)
        let realKey = Int(iteration) < Self.keyCount
        let mk = realKey ? HMACSHA256.authenticationCode(for: [0x01], using: chainKeys[Int(iteration)]) : fixedBytes(32, seed: UInt64(iteration))
        let wrong = Self.material(fixedBytes(32, seed: UInt64(iteration) &+ 0x5EED))
        let right = Self.material(mk)
        let keys: [UInt8]
        var commit: [UInt8]
        switch forgery {
        case .none: keys = right; commit = Array(right[44 ..< 76])
        case .wrongKey: keys = wrong; commit = Array(wrong[44 ..< 76])
        case .wrongCommitment: keys = right; commit = Array(right[44 ..< 76]); commit[Int(iteration) % 32] ^= 0x04
        case .wrongKeyRightCommitment: keys = wrong; commit = Array(right[44 ..< 76])
        }
        let aad = [0x24] + Self.groupEncoding + Self.senderEncoding + chainID + u32(iteration) + commit
        guard let ct = try? AES256GCM.seal(padded, using: SymmetricKey(data: Array(keys[0 ..< 32])),
                                           nonce: Array(keys[32 ..< 44]), authenticating: aad)
        else { fail("forging a sender-key message failed (AES-GCM unavailable?)") }
        let signed = header + commit + ct
        return signed + signingKey.signature(for: Self.groupEncoding + Self.senderEncoding + signed)
    }
}

/// The expected behaviour of one receiving chain.
struct ChainModel {
    let start: Int
    var next: Int
    var skipped: [Int] = []

    init(start: Int) {
        self.start = start
        next = start
    }

    enum Outcome: Equatable { case success, error(SessionError) }

    /// The iteration checks of SPEC §5: nil when the message key is available.
    func iterationError(_ iteration: Int) -> SessionError? {
        if iteration < next {
            if skipped.contains(iteration) { return nil }
            return iteration < start ? .messageKeyUnavailable : .duplicateMessage
        }
        return iteration - next > 256 ? .tooManySkippedMessages : nil
    }

    /// The outcome of an authentic message at `iteration` whose padding is valid or not; applies it.
    mutating func deliver(_ iteration: Int, paddingValid: Bool) -> Outcome {
        if let error = iterationError(iteration) { return .error(error) }
        guard paddingValid else { return .error(.invalidPadding) }
        if iteration < next {
            skipped.removeAll { $0 == iteration }
            return .success
        }
        skipped.append(contentsOf: next ..< iteration)
        if skipped.count > 2000 { skipped.removeFirst(skipped.count - 2000) }
        next = iteration + 1
        return .success
    }

    /// Whether an authentic message at `iteration` could still be read.
    func isReadable(_ iteration: Int) -> Bool { iterationError(iteration) == nil }
}

enum Harness {
    static let chains = [ForgedChain(seed: 0xA), ForgedChain(seed: 0xB)]
    static let startIterations = [0, 3]
    static let group = must { try GroupID(rawRepresentation: ForgedChain.group) }
    static let sender = Addresses.bob
    /// Relabeled groups (a prefix of G, another name) and re-attributed senders (another device
    /// of the same user, another user).
    static let otherGroups = must { [try GroupID(rawRepresentation: Array(ForgedChain.group.dropLast())), try GroupID("fuzz group!")] }
    static let otherSenders = must { [try ProtocolAddress(userID: "bob", deviceID: 8), Addresses.alice] }
    static let baseState: SenderKeyReceiverState = {
        var state = SenderKeyReceiverState()
        for (chain, start) in zip(chains, startIterations) {
            do { try state.processDistribution(chain.distribution(at: start), for: group) } catch { fail("base distribution: \(error)") }
        }
        return state
    }()
    static let allowed: Set<SessionError> = [.unsupportedVersion, .invalidMessage, .unknownChain, .invalidSignature,
                                             .duplicateMessage, .tooManySkippedMessages, .invalidPadding, .messageKeyUnavailable]

    struct Sent {
        let chain: Int
        let iteration: Int
        let bytes: [UInt8]
        let plaintext: [UInt8]?
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var state = baseState
        var models = startIterations.map { ChainModel(start: $0) }
        var sent: [Sent] = []
        var delivered = Set<[Int]>()
        var operations = 0

        func decrypt(_ message: [UInt8], group: GroupID = group, sender: ProtocolAddress = sender) -> Result<[UInt8], SessionError> {
            let before = state.serialized()
            do {
                let plaintext = try state.decrypt(message, for: group, from: sender)
                return .success(plaintext)
            } catch {
                invariant(allowed.contains(error), "decrypt threw \(error), not a SPEC §5 receiver error")
                invariant(state.serialized() == before, "state changed after \(error)")
                return .failure(error)
            }
        }

        func recordSuccess(chain: Int, iteration: Int) {
            invariant(delivered.insert([chain, iteration]).inserted, "chain \(chain) iteration \(iteration) decrypted twice")
        }

        func checkModels() {
            for (index, chain) in chains.enumerated() {
                guard let id = try? SenderChainID(rawRepresentation: chain.chainID) else { fail("chain id") }
                invariant(state.iteration(of: id) == UInt64(models[index].next), "chain \(index) iteration differs from the model")
                invariant(state.skippedKeyCount(of: id) == models[index].skipped.count, "chain \(index) skipped count differs from the model")
            }
        }

        while !input.isAtEnd, operations < 64 {
            operations += 1
            let op = input.byte() % 7
            switch op {
            case 0:
                // selector: bit 0 chain, bit 1 content is a raw padded buffer, bits 2–3 the
                // forgery with bit 7, bit 6 an iteration anywhere (keys only below 4096).
                let selector = input.byte()
                let index = Int(selector & 1)
                let delta = Int(Int16(bitPattern: input.u16()))
                let iteration: Int
                if selector & 0x40 != 0 {
                    iteration = Int(input.u32())
                } else {
                    iteration = min(max(models[index].next + delta, 0), ForgedChain.keyCount - 1)
                }
                let content = input.chunk()
                let padded: [UInt8]
                let expectedPlaintext: [UInt8]?
                if selector & 0x02 == 0, let valid = try? MessagePadding.pad(content) {
                    padded = valid
                    expectedPlaintext = content
                } else {
                    padded = content
                    expectedPlaintext = try? MessagePadding.unpad(content)
                }
                var forgery = ForgedChain.Forgery.none
                if selector & 0x80 != 0 {
                    forgery = [.wrongKey, .wrongCommitment, .wrongKeyRightCommitment, .wrongKey][Int(selector >> 2) & 3]
                }
                let authentic = forgery == .none && iteration < ForgedChain.keyCount
                let message = chains[index].message(iteration: UInt32(truncatingIfNeeded: iteration), padded: padded, forgery: forgery)
                sent.append(Sent(chain: index, iteration: iteration, bytes: message, plaintext: authentic ? expectedPlaintext : nil))
                let result = decrypt(message)
                if !authentic {
                    // A valid signature but a wrong key or commitment: the iteration checks, then
                    // the commitment or the tag.
                    let predicted = models[index].iterationError(iteration) ?? .invalidMessage
                    invariant(result == .failure(predicted), "forged message (\(forgery)): \(result), expected \(predicted)")
                } else {
                    let outcome = models[index].deliver(iteration, paddingValid: expectedPlaintext != nil)
                    switch (outcome, result) {
                    case (.success, .success(let plaintext)):
                        invariant(plaintext == expectedPlaintext, "decrypted plaintext differs from the one sent")
                        recordSuccess(chain: index, iteration: iteration)
                    case (.error(let expected), .failure(let actual)):
                        invariant(expected == actual, "expected \(expected), got \(actual)")
                    default:
                        fail("model predicted \(outcome), receiver gave \(result)")
                    }
                }
            case 1, 2, 3, 6:
                let position = input.u16()
                let flip = input.byte()
                guard !sent.isEmpty else { continue }
                let original = sent[Int(input.byte()) % sent.count]
                if op == 1 {
                    let readable = models[original.chain].isReadable(original.iteration)
                    let result = decrypt(original.bytes)
                    if case .success(let plaintext) = result {
                        invariant(original.plaintext != nil && plaintext == original.plaintext, "replay opened to another plaintext")
                        invariant(readable, "replay of an unreadable iteration succeeded")
                        _ = models[original.chain].deliver(original.iteration, paddingValid: true)
                        recordSuccess(chain: original.chain, iteration: original.iteration)
                    } else if original.plaintext != nil, readable {
                        fail("an authentic, readable message failed on replay: \(result)")
                    } else if case .failure(let error) = result, let expected = models[original.chain].iterationError(original.iteration) {
                        invariant(error == expected, "replay threw \(error), expected \(expected)")
                    }
                } else if op == 2 {
                    var tampered = original.bytes
                    let at = Int(position) % tampered.count
                    tampered[at] ^= flip == 0 ? 1 : flip
                    let result = decrypt(tampered)
                    let expected: SessionError = at == 0 ? .unsupportedVersion : (at <= 32 ? .unknownChain : .invalidSignature)
                    invariant(result == .failure(expected), "byte \(at) flipped: \(result), expected \(expected)")
                } else if op == 3 {
                    let length = Int(position) % original.bytes.count
                    let result = decrypt(Array(original.bytes.prefix(length)))
                    let expected: SessionError = length < 149 ? .invalidMessage : .invalidSignature
                    invariant(result == .failure(expected), "truncated to \(length): \(result), expected \(expected)")
                } else {
                    // Relabeled (another group) or re-attributed (another sender): the signature
                    // binds Encode(group) || Encode(sender).
                    let relabel = flip & 1 == 0
                    let result = relabel ? decrypt(original.bytes, group: otherGroups[Int(flip >> 1) & 1])
                                         : decrypt(original.bytes, sender: otherSenders[Int(flip >> 1) & 1])
                    invariant(result == .failure(.invalidSignature), "\(relabel ? "relabeled" : "re-attributed") message: \(result)")
                }
            case 4:
                let raw = input.chunk()
                let result = decrypt(raw)
                if case .success = result {
                    // Only an authentic message can open; find which chain and iteration it was.
                    guard raw.count >= 149, let index = chains.firstIndex(where: { $0.chainID[...] == raw[1 ..< 33] }) else {
                        fail("raw bytes decrypted without naming a held chain")
                    }
                    let iteration = Int(readU32(raw[33 ..< 37]))
                    invariant(models[index].deliver(iteration, paddingValid: true) == .success, "raw message opened an unreadable iteration")
                    recordSuccess(chain: index, iteration: iteration)
                }
            default:
                let blob = state.serialized()
                do {
                    let reloaded = try SenderKeyReceiverState(serialized: blob)
                    invariant(reloaded.serialized() == blob, "reloaded state serializes differently")
                    state = reloaded
                } catch {
                    fail("a state the library wrote does not load: \(error)")
                }
            }
            checkModels()
        }
    }

    static func seeds() -> [[UInt8]] {
        let hello = Array("hello".utf8)
        var seeds: [[UInt8]] = []
        // In order on A, then replay.
        seeds.append([0, 0x00, 0, 0] + chunk(hello) + [0, 0x00, 0, 0] + chunk(hello) + [1, 0, 0, 0, 0])
        // Skip 256 on B, then read the skipped ones out of order, then a duplicate.
        seeds.append([0, 0x01, 0x01, 0x00] + chunk(hello) + [0, 0x01, 0xff, 0x00] + chunk(hello)
                     + [0, 0x01, 0xff, 0x80] + chunk(hello) + [1, 0, 0, 0, 1])
        // Below B's start (messageKeyUnavailable), then a duplicate on A.
        seeds.append([0, 0x41, 0, 0, 0, 0, 0, 1] + chunk(hello) + [0, 0x00, 0, 0] + chunk(hello) + [0, 0x00, 0xff, 0xff] + chunk(hello))
        // Too far ahead, then a bad padding, then a flipped byte and a truncation.
        seeds.append([0, 0x00, 0x01, 0x01] + chunk(hello) + [0, 0x02, 0, 0] + chunk([0x01, 0, 0, 0, 9])
                     + [2, 0, 50, 0x20, 0] + [3, 0, 148, 0, 0])
        // Every forgery, a far iteration, relabeled and re-attributed, persist and reload.
        seeds.append([0, 0x80, 0, 0] + chunk(hello) + [0, 0x84, 0, 0] + chunk(hello) + [0, 0x88, 0, 0] + chunk(hello)
                     + [0, 0x41, 0, 0, 0xff, 0xff, 0xff, 0xff] + chunk(hello) + [6, 0, 0, 0, 0] + [6, 0, 0, 1, 0] + [6, 0, 0, 2, 0] + [5])
        // Many maximal jumps: exercises the 2000-key eviction.
        seeds.append(Array((0 ..< 10).map { _ in [0, 0x00, 0x01, 0x00] + chunk([]) }.joined()) + [5])
        // Raw authentic messages (and a foreign one).
        let chain = chains[0]
        for iteration in [0, 1, 200] {
            guard let padded = try? MessagePadding.pad(hello) else { continue }
            seeds.append([4] + chunk(chain.message(iteration: UInt32(iteration), padded: padded)))
        }
        seeds.append([4] + chunk([0x24] + [UInt8](repeating: 7, count: 160)))
        seeds.append([4] + chunk([0x23]))
        seeds.append([4] + chunk([0x11] + [UInt8](repeating: 7, count: 160)))
        return seeds
    }
}
