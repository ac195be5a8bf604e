// Harness `sender_key_message`: the sender-key receiver (SPEC §5), `SenderKeyReceiverState.decrypt`.
//
// The receiver starts from a fixed state holding two chains: A (distributed at iteration 0)
// and B (distributed at iteration 3). The input is a program of operations; the harness
// forges authentic messages itself (SPEC §5 built from the primitives, independently of the
// library's sender), so the fuzzer reaches everything behind the signature and the tag.
// A model of the chain (next iteration, skipped iterations, MAX_SKIP 256, MAX_STORED 2000
// oldest-first eviction) predicts each outcome. Invariants checked on every operation:
//   - errors are SPEC §5 errors, and exactly the one predicted where the SPEC fixes it;
//   - after an error the serialized state is byte-for-byte what it was before;
//   - a success returns the plaintext that was sent, and never twice for one (chain, iteration);
//   - the state's iteration and skipped-key count equal the model's;
//   - persisting and reloading the state gives the same bytes.
//
// Operations (op byte mod 6): 0 forge a message, 1 replay an earlier one, 2 flip one byte of
// an earlier one, 3 truncate an earlier one, 4 deliver raw bytes, 5 persist and reload.
import SessionKit
import SignalPrimitives

/// A sender-key chain rebuilt from SPEC §5's formulas with the primitives.
struct ForgedChain {
    static let keyCount = 4096
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
        [0x10] + chainID + u32(iteration) + chainKeys[iteration] + signingKey.publicKey.rawRepresentation
    }

    /// An authentic message at `iteration` carrying `padded` (valid padding or not).
    /// `garbageKey` encrypts under a wrong key instead (the signature is still valid).
    func message(iteration: UInt32, padded: [UInt8], garbageKey: Bool = false) -> [UInt8] {
        let header = [0x11] + chainID + u32(Int(iteration))
        let mk: [UInt8]
        if !garbageKey, Int(iteration) < Self.keyCount {
            mk = HMACSHA256.authenticationCode(for: [0x01], using: chainKeys[Int(iteration)])
        } else {
            mk = fixedBytes(32, seed: UInt64(iteration))
        }
        guard let material = try? HKDF.deriveKey(inputKeyMaterial: mk, salt: [UInt8](repeating: 0, count: 32),
                                                 info: Array("SessionKit SenderKey v1".utf8), outputByteCount: 44),
              let ct = try? AES256GCM.seal(padded, using: SymmetricKey(data: Array(material[0 ..< 32])),
                                           nonce: Array(material[32 ..< 44]), authenticating: header)
        else { fail("forging a sender-key message failed (AES-GCM unavailable?)") }
        let signed = header + ct
        return signed + signingKey.signature(for: signed)
    }

    func u32(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}

/// The expected behaviour of one receiving chain.
struct ChainModel {
    var next: Int
    var skipped: [Int] = []

    enum Outcome: Equatable { case success, error(SessionError) }

    /// The outcome of an authentic message at `iteration` whose padding is valid or not; applies it.
    mutating func deliver(_ iteration: Int, paddingValid: Bool) -> Outcome {
        if iteration < next {
            guard let index = skipped.firstIndex(of: iteration) else { return .error(.duplicateMessage) }
            guard paddingValid else { return .error(.invalidPadding) }
            skipped.remove(at: index)
            return .success
        }
        guard iteration - next <= 256 else { return .error(.tooManySkippedMessages) }
        guard paddingValid else { return .error(.invalidPadding) }
        skipped.append(contentsOf: next ..< iteration)
        if skipped.count > 2000 { skipped.removeFirst(skipped.count - 2000) }
        next = iteration + 1
        return .success
    }

    /// Whether an authentic message at `iteration` could still be read.
    func isReadable(_ iteration: Int) -> Bool {
        iteration < next ? skipped.contains(iteration) : iteration - next <= 256
    }
}

enum Harness {
    static let chains = [ForgedChain(seed: 0xA), ForgedChain(seed: 0xB)]
    static let startIterations = [0, 3]
    static let baseState: SenderKeyReceiverState = {
        var state = SenderKeyReceiverState()
        for (chain, start) in zip(chains, startIterations) {
            do { try state.processDistribution(chain.distribution(at: start)) } catch { fail("base distribution: \(error)") }
        }
        return state
    }()
    static let allowed: Set<SessionError> = [.unsupportedVersion, .invalidMessage, .unknownChain, .invalidSignature,
                                             .duplicateMessage, .tooManySkippedMessages, .invalidPadding]

    struct Sent {
        let chain: Int
        let iteration: Int
        let bytes: [UInt8]
        let plaintext: [UInt8]?
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var state = baseState
        var models = startIterations.map { ChainModel(next: $0) }
        var sent: [Sent] = []
        var delivered = Set<[Int]>()
        var operations = 0

        func decrypt(_ message: [UInt8]) -> Result<[UInt8], SessionError> {
            let before = state.serialized()
            do {
                let plaintext = try state.decrypt(message)
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
            let op = input.byte() % 6
            switch op {
            case 0:
                let selector = input.byte()
                let index = Int(selector & 1)
                let delta = Int(Int16(bitPattern: input.u16()))
                let iteration: Int
                let garbage = selector & 0x80 != 0
                if selector & 0x40 != 0 {
                    iteration = Int(input.u32())             // anywhere, keys only below 4096
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
                let usesGarbage = garbage || iteration >= ForgedChain.keyCount
                let message = chains[index].message(iteration: UInt32(truncatingIfNeeded: iteration), padded: padded,
                                                    garbageKey: usesGarbage)
                sent.append(Sent(chain: index, iteration: iteration, bytes: message, plaintext: usesGarbage ? nil : expectedPlaintext))
                let result = decrypt(message)
                if usesGarbage {
                    // A valid signature but the wrong key: the iteration checks, then the tag.
                    let model = models[index]
                    let predicted: SessionError = iteration < model.next
                        ? (model.skipped.contains(iteration) ? .invalidMessage : .duplicateMessage)
                        : (iteration - model.next > 256 ? .tooManySkippedMessages : .invalidMessage)
                    invariant(result == .failure(predicted), "wrong-key message: \(result), expected \(predicted)")
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
            case 1, 2, 3:
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
                    }
                } else if op == 2 {
                    var tampered = original.bytes
                    let at = Int(position) % tampered.count
                    tampered[at] ^= flip == 0 ? 1 : flip
                    let result = decrypt(tampered)
                    let expected: SessionError = at == 0 ? .unsupportedVersion : (at <= 32 ? .unknownChain : .invalidSignature)
                    invariant(result == .failure(expected), "byte \(at) flipped: \(result), expected \(expected)")
                } else {
                    let length = Int(position) % original.bytes.count
                    let result = decrypt(Array(original.bytes.prefix(length)))
                    let expected: SessionError = length < 117 ? .invalidMessage : .invalidSignature
                    invariant(result == .failure(expected), "truncated to \(length): \(result), expected \(expected)")
                }
            case 4:
                let raw = input.chunk()
                let result = decrypt(raw)
                if case .success = result {
                    // Only an authentic message can open; find which chain and iteration it was.
                    guard raw.count >= 37, let index = chains.firstIndex(where: { $0.chainID[...] == raw[1 ..< 33] }) else {
                        fail("raw bytes decrypted without naming a held chain")
                    }
                    let iteration = Int(raw[33 ..< 37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
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
        // Too far ahead, then a bad padding, then a flipped byte and a truncation.
        seeds.append([0, 0x00, 0x01, 0x01] + chunk(hello) + [0, 0x02, 0, 0] + chunk([0x01, 0, 0, 0, 9])
                     + [2, 0, 50, 0x20, 0] + [3, 0, 116, 0, 0])
        // Wrong key, far iteration, persist and reload.
        seeds.append([0, 0x80, 0, 0] + chunk(hello) + [0, 0x41, 0, 0, 0xff, 0xff, 0xff, 0xff] + chunk(hello) + [5])
        // Many maximal jumps: exercises the 2000-key eviction.
        seeds.append(Array((0 ..< 10).map { _ in [0, 0x00, 0x01, 0x00] + chunk([]) }.joined()) + [5])
        // Raw authentic messages (and a foreign one).
        let chain = chains[0]
        for iteration in [0, 1, 200] {
            guard let padded = try? MessagePadding.pad(hello) else { continue }
            seeds.append([4] + chunk(chain.message(iteration: UInt32(iteration), padded: padded)))
        }
        seeds.append([4] + chunk([0x11] + [UInt8](repeating: 7, count: 140)))
        seeds.append([4] + chunk([0x10]))
        return seeds
    }
}
