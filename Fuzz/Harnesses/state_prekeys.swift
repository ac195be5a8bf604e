// Harness `state_prekeys`: loading persisted `LocalPreKeys` (kind 0x04).
//
// Input as `loadState` reads it. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; loaded prekeys serialize back to the same bytes; every one-time
// prekey listed is found by its id and ids are distinct; the current signed prekey is found
// by its id; removing a one-time prekey removes exactly that one.
import SessionKit
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        guard let (keys, _) = loadState(bytes, kind: 0x04, load: { (blob: [UInt8]) throws(SessionError) in try LocalPreKeys(serialized: blob) },
                                        serialize: { $0.serialized() }) else { return }
        let ids = keys.oneTimePreKeys.map(\.id)
        invariant(Set(ids).count == ids.count, "repeated one-time prekey ids")
        invariant(keys.oneTimePreKeyCount == ids.count, "count disagrees")
        for key in keys.oneTimePreKeys.prefix(16) {
            invariant(keys.oneTimePreKey(id: key.id)?.publicKey == key.publicKey, "one-time prekey \(key.id) not found by id")
        }
        let current = keys.currentSignedPreKey.key
        invariant(keys.signedPreKey(id: current.id)?.publicKey == current.publicKey, "current signed prekey not found by id")
        if let first = ids.first {
            var copy = keys
            invariant(copy.removeOneTimePreKey(id: first)?.id == first, "removal returned another key")
            invariant(copy.oneTimePreKey(id: first) == nil && copy.oneTimePreKeyCount == ids.count - 1, "removal did not remove exactly one")
        }
    }

    static func seeds() -> [[UInt8]] {
        do {
            let random = CountingRandomSource(seed: 7)
            let identity = try IdentityKeyPair(using: random)
            let start = Timestamp(secondsSince1970: 1_700_000_000)
            var keys = try LocalPreKeys(identity: identity, now: start, policy: try PreKeyPolicy(oneTimePreKeyBatchSize: 3, oneTimePreKeyLowWaterMark: 1), random: random)
            var blobs = [keys.serialized()]
            _ = try keys.rotateSignedPreKey(identity: identity, now: start.adding(seconds: 86_400 * 8), random: random)
            _ = keys.removeOneTimePreKey(id: 2)
            blobs.append(keys.serialized())
            return stateSeeds(blobs)
        } catch {
            fail("seed prekeys: \(error)")
        }
    }
}
