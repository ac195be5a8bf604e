// Harness `state_sender_key_receiver`: loading a persisted sender-key receiver state (kind
// 0x03, version 2: per chain its id, start iteration, iteration, chain key, signing key and
// skipped keys).
//
// Input as `loadState` reads it. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; a loaded state serializes back to the same bytes, holds at most
// five distinct chains with at most 2000 skipped keys each, its description shows no chain
// key, and a forged message (for any group and sender) fails with `invalidSignature` and
// leaves it unchanged.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let group = must { try GroupID("state group") }

    static func run(_ bytes: [UInt8]) {
        guard let (loaded, blob) = loadState(bytes, kind: 0x03, load: { (blob: [UInt8]) throws(SessionError) in try SenderKeyReceiverState(serialized: blob) },
                                            serialize: { (state: SenderKeyReceiverState) in state.serialized() }) else { return }
        var state = loaded
        let ids = state.chainIDs
        invariant(ids.count <= 5 && Set(ids).count == ids.count, "\(ids.count) chains, or repeated ids")
        for id in ids {
            invariant((state.skippedKeyCount(of: id) ?? Int.max) <= 2000, "more than 2000 skipped keys")
            invariant((state.iteration(of: id) ?? .max) <= UInt64(1) << 32, "an iteration beyond 2^32")
        }
        // Secrets in the body: per chain, the chain key at offset 44 of the chain record, and
        // every skipped message key. Check the chain keys (the skipped keys follow the same path).
        var offset = 6 + 4
        for id in ids {
            let key = Hex.encode(blob[(offset + 44) ..< (offset + 76)])
            // (Chain ids are public and shown; skip a key that happens to equal one.)
            if !ids.contains(where: { Hex.encode($0.rawRepresentation) == key }) {
                invariant(!state.description.contains(key) && !state.debugDescription.contains(key), "description shows a chain key")
            }
            let skipped = state.skippedKeyCount(of: id) ?? 0
            offset += 32 + 4 + 8 + 32 + 32 + 4 + skipped * 36
        }
        invariant(offset == blob.count - 16, "harness: the chain records do not fill the body")
        // A forged message for the first chain fails and changes nothing.
        if let first = ids.first {
            let forged = [0x24] + first.rawRepresentation + [0, 0, 0, 0] + [UInt8](repeating: 0x5A, count: 32 + 16 + 64)
            do {
                _ = try state.decrypt(forged, for: group, from: Addresses.bob)
                fail("a forged message decrypted")
            } catch {
                invariant(error == .invalidSignature, "forged message threw \(error)")
                invariant(state.serialized() == blob, "state changed after a forged message")
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        var blobs: [[UInt8]] = []
        var state = SenderKeyReceiverState()
        blobs.append(state.serialized())
        for seed in UInt64(1) ... 3 {
            guard let signing = try? Ed25519.PrivateKey(seed: fixedBytes(32, seed: seed)),
                  var chain = try? SenderKeySendingChain(group: group, sender: Addresses.bob, initialChainKey: fixedBytes(32, seed: seed + 100),
                                                         signingKey: signing, iteration: UInt32(seed)),
                  let distribution = try? chain.distributionMessage(),
                  (try? state.process(distribution, for: group)) != nil
            else { fail("seed chains") }
            // Skip a few iterations so that skipped keys are persisted.
            var last: [UInt8] = []
            for _ in 0 ..< Int(seed) * 3 { last = (try? chain.encrypt([UInt8(seed)])) ?? [] }
            _ = try? state.decrypt(last, for: group, from: Addresses.bob)
            blobs.append(state.serialized())
        }
        return stateSeeds(blobs)
    }
}
