// Harness `state_identity`: loading a persisted `IdentityKeyPair` (kind 0x05).
//
// Input as `loadState` reads it. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; a loaded identity serializes back to the same bytes, its public
// key is the Ed25519 key of the stored seed, its signatures verify, and its description does
// not show the seed.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        guard let (identity, blob) = loadState(bytes, kind: 0x05, load: { (blob: [UInt8]) throws(SessionError) in try IdentityKeyPair(serialized: blob) },
                                               serialize: { $0.serialized() }) else { return }
        let seed = Array(blob[6 ..< 38])
        do {
            let expected = try Ed25519.PrivateKey(seed: seed).publicKey
            invariant(expected == identity.publicKey, "public key is not the seed's")
        } catch {
            fail("a 32-byte seed was refused: \(error)")
        }
        let message = Array("prekey".utf8)
        invariant(identity.publicKey.isValidSignature(identity.privateKey.signature(for: message), for: message), "signature does not verify")
        let hex = Hex.encode(seed)
        invariant(hex == identity.publicKey.hexString || (!identity.description.contains(hex) && !identity.debugDescription.contains(hex)),
                  "description shows the seed")
    }

    static func seeds() -> [[UInt8]] {
        do {
            return stateSeeds([try IdentityKeyPair(seed: fixedBytes(32, seed: 1)).serialized(),
                               try IdentityKeyPair(seed: [UInt8](repeating: 0, count: 32)).serialized()])
        } catch {
            fail("seed identity: \(error)")
        }
    }
}
