// Harness `state_sender_key_sender`: loading a persisted sender-key sending chain.
//
// Input: a mode byte. Even: the rest is the whole blob. Odd: the next byte is the version and
// the rest the body, wrapped by the harness in a valid envelope and checksum (kind 0x02), so
// the fuzzer reaches the body parser. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; a loaded chain serializes back to the same bytes, its
// description shows neither the chain key nor the signing seed, and it is usable: its
// distribution message and its next message are accepted by a receiver (or it reports
// `chainExhausted` exactly when its iteration is 2^32).
import SessionKit
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        let blob = mode & 1 == 0 ? input.rest() : envelope(kind: 0x02, version: input.byte(), body: input.rest())
        var chain: SenderKeySendingChain
        do {
            chain = try SenderKeySendingChain(serialized: blob)
        } catch {
            invariant(error == .invalidPayload || error == .unsupportedVersion, "load threw \(error)")
            return
        }
        invariant(chain.serialized() == blob, "loaded chain does not serialize to its bytes")
        // Body: chain_id (32) || u64 iteration || chain key (32) || seed (32).
        // (The chain id is public and shown; skip a secret that happens to equal it.)
        for secret in [blob[46 ..< 78], blob[78 ..< 110]] where !secret.elementsEqual(blob[6 ..< 38]) {
            let hex = Hex.encode(secret)
            invariant(!chain.description.contains(hex) && !chain.debugDescription.contains(hex), "description shows a secret")
        }
        let exhausted = chain.iteration == (UInt64(1) << 32)
        invariant(chain.isExhausted == exhausted, "isExhausted disagrees with the iteration")
        do {
            let distribution = try chain.distributionMessage()
            invariant(!exhausted, "an exhausted chain gave a distribution")
            var receiver = SenderKeyReceiverState()
            try receiver.processDistribution(distribution.serialized)
            let message = try chain.encrypt(Array("ping".utf8))
            let plaintext = try receiver.decrypt(message)
            invariant(plaintext == Array("ping".utf8), "round trip through a loaded chain failed")
        } catch {
            invariant(exhausted && error == .chainExhausted, "loaded chain failed with \(error)")
        }
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for iteration in [UInt32(0), 5, .max] {
            guard let signing = try? Ed25519.PrivateKey(seed: fixedBytes(32, seed: 1)),
                  let chain = try? SenderKeySendingChain(initialChainKey: fixedBytes(32, seed: 2), signingKey: signing,
                                                         iteration: iteration == .max ? 0 : iteration)
            else { continue }
            let blob = chain.serialized()
            seeds.append([0] + blob)
            seeds.append([1, blob[5]] + blob[6 ..< (blob.count - 16)])
        }
        // An exhausted chain: iteration 2^32 written into the body.
        if let blob = seeds.first {
            var body = Array(blob[7 ..< (blob.count - 16)])
            body.replaceSubrange(32 ..< 40, with: [0, 0, 0, 1, 0, 0, 0, 0])
            seeds.append([1, 1] + body)
        }
        return seeds
    }
}
