// Harness `state_sender_key_sender`: loading a persisted sender-key sending chain (kind 0x02,
// version 3: `Encode(group) || Encode(sender) || chain_id || u64(iteration) || chain_key ||
// signing_seed || u8(has_created_at) || [i64(created_at)]`; version 2, which ends after the
// signing seed, is still read).
//
// Input as `loadState` reads it. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; a loaded chain serializes back to the same bytes (a version-2 blob
// to its version-3 form: the same body and `has_created_at` = 0); its group, sender, chain id
// and creation time are the encoded ones (a version-2 chain has none); its description shows
// neither the chain key nor the signing seed; and it is usable: its distribution message (for
// its group, at its iteration) is accepted by a receiver, which then decrypts its next message
// for that group from that sender — and refuses it for another group or sender — or it
// reports `chainExhausted` exactly when its iteration is 2^32.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        guard let (loaded, blob) = loadState(bytes, kind: 0x02, load: { (blob: [UInt8]) throws(SessionError) in try SenderKeySendingChain(serialized: blob) },
                                            serialize: { (chain: SenderKeySendingChain) in chain.serialized() },
                                            normalize: versionThree) else { return }
        var chain = loaded
        let groupEnd = 6 + chain.group.encoded.count
        let senderEnd = groupEnd + chain.sender.encoded.count
        invariant(Array(blob[6 ..< groupEnd]) == chain.group.encoded, "group is not the encoded one")
        invariant(Array(blob[groupEnd ..< senderEnd]) == chain.sender.encoded, "sender is not the encoded one")
        invariant(Array(blob[senderEnd ..< senderEnd + 32]) == chain.chainID.rawRepresentation, "chain id")
        // The creation time follows the signing seed: 0, or 1 and an i64 (the blob is version 3).
        let createdAtStart = senderEnd + 104
        invariant(blob[5] == SenderKeySendingChain.stateVersion, "a chain written as version \(blob[5])")
        switch blob[createdAtStart] {
        case 0:
            invariant(chain.createdAt == nil && blob.count == createdAtStart + 1 + 16, "a chain without a creation time")
        case 1:
            let encoded = blob[(createdAtStart + 1) ..< (createdAtStart + 9)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            invariant(chain.createdAt?.secondsSince1970 == Int64(bitPattern: encoded) && blob.count == createdAtStart + 9 + 16,
                      "the creation time is not the encoded one")
        default:
            fail("has_created_at is \(blob[createdAtStart])")
        }
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

    /// A version-2 blob as version 3 writes it: the same body, then `has_created_at` = 0 (a
    /// version-2 chain has no creation time). Other blobs unchanged.
    static func versionThree(_ blob: [UInt8]) -> [UInt8] {
        guard blob.count > 22, blob[5] == 2 else { return blob }
        return envelope(kind: 0x02, version: 3, body: Array(blob[6 ..< (blob.count - 16)]) + [0])
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
        // A chain with its creation time, made by the library (random keys from a fixed source).
        let dated = must("a dated chain") {
            try SenderKeySendingChain(group: GroupID(rawRepresentation: Array("dated".utf8)), sender: Addresses.alice,
                                      createdAt: Timestamp(secondsSince1970: 1_700_000_000), using: CountingRandomSource(seed: 4))
        }
        blobs.append(dated.serialized())
        var seeds = stateSeeds(blobs)
        // An exhausted chain: iteration 2^32 written into the body.
        let blob = blobs[0]
        var body = Array(blob[6 ..< (blob.count - 16)])
        let iterationOffset = (1 + 5) + (1 + 3 + 4) + 32     // Encode("group"), Encode(bob.7), chain id
        body.replaceSubrange(iterationOffset ..< iterationOffset + 8, with: [0, 0, 0, 1, 0, 0, 0, 0])
        seeds.append([1, blob[5]] + body)
        // Creation times before 1970 and at the extremes of an i64, written from the layout
        // (body without `has_created_at` = 0, then 1 and the i64).
        let undated = Array(blob[6 ..< (blob.count - 17)])
        for time: UInt64 in [0xFFFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, 0x7FFF_FFFF_FFFF_FFFF, 0] {
            seeds.append([1, 3] + undated + [1] + (0 ..< 8).map { UInt8(truncatingIfNeeded: time >> (56 - 8 * $0)) })
        }
        // Version 2 (no creation time): version 3's body without its last byte.
        seeds.append([1, 2] + undated)
        seeds.append([0] + envelope(kind: 0x02, version: 2, body: Array(blobs[1][6 ..< (blobs[1].count - 17)])))
        return seeds
    }
}
