// Harness `state_sender_key_sender`: loading a persisted sender-key sending chain (kind 0x02,
// version 2: `Encode(group) || Encode(sender) || chain_id || u64(iteration) || chain_key ||
// signing_seed`).
//
// Input as `loadState` reads it. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; a loaded chain serializes back to the same bytes; its group and
// sender are the encoded ones; its description shows neither the chain key nor the signing
// seed; and it is usable: its distribution message (for its group, at its iteration) is
// accepted by a receiver, which then decrypts its next message for that group from that
// sender — and refuses it for another group or sender — or it reports `chainExhausted`
// exactly when its iteration is 2^32.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        guard let (loaded, blob) = loadState(bytes, kind: 0x02, load: { (blob: [UInt8]) throws(SessionError) in try SenderKeySendingChain(serialized: blob) },
                                            serialize: { (chain: SenderKeySendingChain) in chain.serialized() }) else { return }
        var chain = loaded
        let groupEnd = 6 + chain.group.encoded.count
        let senderEnd = groupEnd + chain.sender.encoded.count
        invariant(Array(blob[6 ..< groupEnd]) == chain.group.encoded, "group is not the encoded one")
        invariant(Array(blob[groupEnd ..< senderEnd]) == chain.sender.encoded, "sender is not the encoded one")
        invariant(Array(blob[senderEnd ..< senderEnd + 32]) == chain.chainID.rawRepresentation, "chain id")
        // (The group, sender and chain id are public and shown; skip a secret inside them.)
        let shown = Hex.encode(Array(blob[6 ..< senderEnd + 32]))
        for secret in [blob[(senderEnd + 40) ..< (senderEnd + 72)], blob[(senderEnd + 72) ..< (senderEnd + 104)]] {
            let hex = Hex.encode(secret)
            invariant(shown.contains(hex) || !chain.description.contains(hex) && !chain.debugDescription.contains(hex), "description shows a secret")
        }
        let exhausted = chain.iteration == (UInt64(1) << 32)
        invariant(chain.isExhausted == exhausted, "isExhausted disagrees with the iteration")
        do {
            let distribution = try chain.distributionMessage()
            invariant(!exhausted, "an exhausted chain gave a distribution")
            invariant(distribution.group == chain.group && distribution.chainID == chain.chainID
                      && UInt64(distribution.iteration) == chain.iteration, "distribution fields")
            var receiver = SenderKeyReceiverState()
            try receiver.processDistribution(distribution.serialized, for: chain.group)
            let message = try chain.encrypt(Array("ping".utf8))
            var other = receiver
            let otherSender = try ProtocolAddress(userID: chain.sender.userID, deviceID: chain.sender.deviceID &+ 1)
            do {
                _ = try other.decrypt(message, for: chain.group, from: otherSender)
                fail("a message decrypted from another sender")
            } catch {
                invariant(error == .invalidSignature, "another sender: \(error)")
            }
            let plaintext = try receiver.decrypt(message, for: chain.group, from: chain.sender)
            invariant(plaintext == Array("ping".utf8), "round trip through a loaded chain failed")
        } catch {
            invariant(exhausted && error == .chainExhausted, "loaded chain failed with \(error)")
            invariant(chain.serialized() == blob, "a failed call changed the chain")
        }
    }

    static func seeds() -> [[UInt8]] {
        var blobs: [[UInt8]] = []
        for (index, iteration) in [UInt32(0), 5, .max].enumerated() {
            let group = must { try GroupID(rawRepresentation: index == 1 ? fixedBytes(16, seed: 3) : Array("group".utf8)) }
            let sender = index == 2 ? Addresses.decomposed : Addresses.bob
            guard let signing = try? Ed25519.PrivateKey(seed: fixedBytes(32, seed: 1)),
                  let chain = try? SenderKeySendingChain(group: group, sender: sender, initialChainKey: fixedBytes(32, seed: 2), signingKey: signing,
                                                         iteration: iteration == .max ? 0 : iteration)
            else { fail("seed chains") }
            blobs.append(chain.serialized())
        }
        var seeds = stateSeeds(blobs)
        // An exhausted chain: iteration 2^32 written into the body.
        let blob = blobs[0]
        var body = Array(blob[6 ..< (blob.count - 16)])
        let iterationOffset = (1 + 5) + (1 + 3 + 4) + 32     // Encode("group"), Encode(bob.7), chain id
        body.replaceSubrange(iterationOffset ..< iterationOffset + 8, with: [0, 0, 0, 1, 0, 0, 0, 0])
        seeds.append([1, blob[5]] + body)
        return seeds
    }
}
