// Harness `state_session`: loading a persisted `SessionState` (kind 0x01).
//
// Input as `loadState` reads it (whole blob, or version + body in a valid envelope).
// Invariants: failures are `invalidPayload` or `unsupportedVersion` only; a loaded session
// serializes back to the same bytes; its description does not depend on its root key (the
// root key flipped gives the same description); it can encrypt, or fails with
// `chainExhausted` or `noSession` (no sending chain) and stays unchanged; raw garbage does not decrypt and changes nothing.
import SessionKit
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        guard let (session, blob) = loadState(bytes, kind: 0x01, load: { (blob: [UInt8]) throws(SessionError) in try SessionState(serialized: blob) },
                                              serialize: { $0.serialized() }) else { return }
        // The root key follows the prefix: 6 + 1 + 4 + 4 + 32·4 + 4 + flag (+ opk id) + 1.
        let flagOffset: Int = 147
        let flag: UInt8 = blob[flagOffset]
        let rootKey: Int = flagOffset + (flag == 1 ? 6 : 2)
        var body = Array(blob[6 ..< (blob.count - 16)])
        body[rootKey - 6] ^= 0x80
        do {
            let altered = try SessionState(serialized: envelope(kind: 0x01, version: blob[5], body: body))
            invariant(altered.description == session.description && altered.debugDescription == session.debugDescription,
                      "the description depends on the root key")
        } catch {
            fail("a session with another root key does not load: \(error)")
        }
        var copy = session
        do {
            let message = try copy.encrypt(Array("ping".utf8))
            invariant(!message.isEmpty, "empty message")
        } catch {
            // chainExhausted at the counter limit; noSession for a session without a sending
            // chain (a responder that has not decrypted its first message).
            invariant(error == .chainExhausted || error == .noSession, "a loaded session failed to encrypt: \(error)")
            invariant(copy.serialized() == blob, "a failed encrypt changed the session")
        }
        // Counters 0, so that a loaded configuration with a huge MAX_SKIP costs nothing here.
        let garbage = [0x01] + [UInt8](repeating: 0x09, count: 32) + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0x5A, count: 30)
        var target = session
        do {
            _ = try target.decrypt(garbage)
            fail("garbage decrypted")
        } catch {
            invariant(target.serialized() == blob, "a failed decrypt changed the session (\(error))")
        }
    }

    static func seeds() -> [[UInt8]] {
        var blobs: [[UInt8]] = []
        do {
            let random = CountingRandomSource(seed: 5)
            let alice = try IdentityKeyPair(using: random)
            let bob = try IdentityKeyPair(using: random)
            let signed = try SignedPreKey(id: 3, signedBy: bob, using: random)
            let oneTime = try OneTimePreKey(id: 4, using: random)
            for useOneTime in [true, false] {
                let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: signed, oneTimePreKey: useOneTime ? oneTime : nil)
                var a: SessionState? = try SessionState(initiatingWith: bundle, identity: alice, random: random)
                var b: SessionState?
                blobs.append(a?.serialized() ?? [])
                let first = try a?.encrypt([1]) ?? []
                _ = try a?.encrypt([2])
                let third = try a?.encrypt([3]) ?? []
                _ = try SessionCipher.decrypt(third, session: &b, identity: bob,
                                              preKeys: PreKeySet(signedPreKeys: [signed], oneTimePreKeys: [oneTime]), random: random)
                blobs.append(b?.serialized() ?? [])      // responder with two skipped keys
                _ = try SessionCipher.decrypt(first, session: &b, identity: bob, preKeys: PreKeySet(), random: random)
                let reply = try b?.encrypt([4]) ?? []
                _ = try SessionCipher.decrypt(reply, session: &a, identity: alice, preKeys: PreKeySet(), random: random)
                blobs.append(a?.serialized() ?? [])
                blobs.append(b?.serialized() ?? [])
            }
        } catch {
            fail("seed sessions: \(error)")
        }
        return stateSeeds(blobs)
    }
}
