// Harness `state_sender_key_receiver`: loading a persisted sender-key receiver state.
//
// Input: a mode byte. Even: the rest is the whole blob. Odd: the next byte is the version and
// the rest the body, wrapped by the harness in a valid envelope (kind 0x03). Invariants:
// failures are `invalidPayload` or `unsupportedVersion` only; a loaded state serializes
// back to the same bytes, holds at most five distinct chains with at most 2000 skipped keys
// each, its description shows no key, and a failed decrypt leaves it unchanged.
import SessionKit
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        let blob = mode & 1 == 0 ? input.rest() : envelope(kind: 0x03, version: input.byte(), body: input.rest())
        var state: SenderKeyReceiverState
        do {
            state = try SenderKeyReceiverState(serialized: blob)
        } catch {
            invariant(error == .invalidPayload || error == .unsupportedVersion, "load threw \(error)")
            return
        }
        invariant(state.serialized() == blob, "loaded state does not serialize to its bytes")
        let ids = state.chainIDs
        invariant(ids.count <= 5 && Set(ids).count == ids.count, "\(ids.count) chains, or repeated ids")
        for id in ids {
            invariant((state.skippedKeyCount(of: id) ?? Int.max) <= 2000, "more than 2000 skipped keys")
        }
        // Secrets in the body: per chain, the chain key at offset 40 of the chain record; and
        // every skipped message key. Check the chain keys (the skipped keys follow the same path).
        var offset = 6 + 4
        for id in ids {
            let key = Hex.encode(blob[(offset + 40) ..< (offset + 72)])
            // (Chain ids are public and shown; skip a key that happens to equal one.)
            if !ids.contains(where: { Hex.encode($0.rawRepresentation) == key }) {
                invariant(!state.description.contains(key) && !state.debugDescription.contains(key), "description shows a chain key")
            }
            let skipped = state.skippedKeyCount(of: id) ?? 0
            offset += 32 + 8 + 32 + 32 + 4 + skipped * 36
        }
        // A forged message for the first chain fails and changes nothing.
        if let first = ids.first {
            let forged = [0x11] + first.rawRepresentation + [0, 0, 0, 0] + [UInt8](repeating: 0x5A, count: 80)
            let before = state.serialized()
            do {
                _ = try state.decrypt(forged)
                fail("a forged message decrypted")
            } catch {
                invariant(error == .invalidSignature, "forged message threw \(error)")
                invariant(state.serialized() == before, "state changed after a forged message")
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        var state = SenderKeyReceiverState()
        seeds.append(state.serialized())
        for seed in UInt64(1) ... 3 {
            guard let signing = try? Ed25519.PrivateKey(seed: fixedBytes(32, seed: seed)),
                  var chain = try? SenderKeySendingChain(initialChainKey: fixedBytes(32, seed: seed + 100), signingKey: signing),
                  let distribution = try? chain.distributionMessage()
            else { continue }
            state.process(distribution)
            // Skip a few iterations so that skipped keys are persisted.
            var last: [UInt8] = []
            for _ in 0 ..< Int(seed) * 3 { last = (try? chain.encrypt([UInt8(seed)])) ?? [] }
            _ = try? state.decrypt(last)
            seeds.append(state.serialized())
        }
        return seeds.flatMap { blob in [[0] + blob, [1, blob[5]] + blob[6 ..< (blob.count - 16)]] }
    }
}
