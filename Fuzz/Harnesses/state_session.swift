// Harness `state_session`: loading a persisted `SessionState` (kind 0x01, version 4: role, generation,
// limits, both identity keys and addresses, EK_A, SHA-256(P), an initiator's pending prefix P,
// the ratchet, `isPostQuantum`, then the peer's registration id (u32, 0 for none) and
// `isArchived`; version 3, without the last two, and version 2, also without `isPostQuantum`,
// are still read).
//
// Input as `loadState` reads it (whole blob, or version + body in a valid envelope).
// Invariants: failures are `invalidPayload` or `unsupportedVersion` only; a loaded session
// serializes back to the same bytes (a version-2 or -3 blob to its version-4 form: the same body
// with `isPostQuantum` appended to a version 2, set exactly when its pending prefix has a KEM
// part, then no registration id and not archived); a registration id is 1 … 2^31 − 1; a pending prefix
// with or without a KEM part agrees with `isPostQuantum`; its AD is IK_A || IK_B || Encode(A) || Encode(B) of its
// identity keys and addresses, initiator first; a pending prefix belongs to an initiator and
// carries its identity key, EK_A and digest; its description does not depend on its root key
// (the root key flipped gives the same description); it can encrypt (a prekey message
// carrying P while a prefix is pending, else a ratchet message), or fails with
// `chainExhausted` or `noSession` (no sending chain) and stays unchanged; raw garbage (a
// ratchet message and a prekey message) does not decrypt and changes nothing.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        guard let (session, blob) = loadState(bytes, kind: 0x01, load: { (blob: [UInt8]) throws(SessionError) in try SessionState(serialized: blob) },
                                              serialize: { (session: SessionState) in session.serialized() },
                                              normalize: versionFour) else { return }
        if let id = session.remoteRegistrationID {
            invariant(RegistrationID.validRange.contains(id.rawValue), "a registration id out of range")
        }
        if let prefix = session.pendingPreKeyPrefix {
            invariant(session.isPostQuantum == (prefix.kem != nil), "isPostQuantum disagrees with the pending prefix")
        }
        let initiator = session.role == .initiator
        let ad = initiator
            ? session.localIdentityKey.rawRepresentation + session.remoteIdentityKey.rawRepresentation + session.localAddress.encoded + session.remoteAddress.encoded
            : session.remoteIdentityKey.rawRepresentation + session.localIdentityKey.rawRepresentation + session.remoteAddress.encoded + session.localAddress.encoded
        invariant(session.associatedDataBytes == ad, "AD is not IK_A || IK_B || Encode(A) || Encode(B)")
        if let prefix = session.pendingPreKeyPrefix {
            invariant(initiator && session.sendsPreKeyMessages, "a pending prefix on a responder")
            invariant(prefix.identityKey == session.localIdentityKey && prefix.baseKey == session.baseKey
                      && prefix.digest == session.preKeyPrefixDigest, "the pending prefix is not the session's")
        }
        // The root key follows the prefix part: 6 + 1 + 8 + 4 + 4 + 32 + 32 + addresses + 32 + 32
        // + hasPending (+ u32 + P).
        let pendingOffset = 6 + 81 + session.localAddress.encoded.count + session.remoteAddress.encoded.count + 64
        let rootKey = pendingOffset + 1 + (session.pendingPreKeyPrefix.map { 4 + $0.byteCount } ?? 0)
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
            if let prefix = session.pendingPreKeyPrefix {
                invariant(message.first == 0x22 && Array(message[1 ..< 1 + prefix.byteCount]) == prefix.bytes, "a prekey message without P")
            } else {
                invariant(message.first == 0x21, "a ratchet message of type \(String(describing: message.first))")
            }
        } catch {
            // chainExhausted at the counter limit; noSession for a session without a sending
            // chain (a responder that has not decrypted its first message).
            invariant(error == .chainExhausted || error == .noSession, "a loaded session failed to encrypt: \(error)")
            invariant(copy.serialized() == blob, "a failed encrypt changed the session")
        }
        // Counters 0, so that a loaded configuration with a huge MAX_SKIP costs nothing here.
        let garbage = [0x21] + [UInt8](repeating: 0x09, count: 32) + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0x5A, count: 30)
        let prefix = [0x22] + session.remoteIdentityKey.rawRepresentation + session.baseKey.rawRepresentation + [0, 0, 0, 3, 0]
        for message in [garbage, prefix + garbage] {
            var target = session
            let random = CountingRandomSource(seed: 3)
            do {
                _ = try target.decrypt(message, random: random)
                fail("garbage decrypted")
            } catch {
                invariant(target.serialized() == blob, "a failed decrypt changed the session (\(error))")
                invariant(random.draws == 0, "a failed decrypt drew from the random source")
            }
        }
    }

    /// A version-2 or -3 blob as version 4 writes it: the same body, then (version 2)
    /// `isPostQuantum` (set exactly when the pending prefix has a KEM part: the version-2
    /// reading), then no registration id and not archived. Other blobs unchanged.
    static func versionFour(_ blob: [UInt8]) -> [UInt8] {
        guard blob.count > 22, blob[5] == 2 || blob[5] == 3, let loaded = try? SessionState(serialized: blob) else { return blob }
        let flag: [UInt8] = blob[5] == 2 ? [loaded.pendingPreKeyPrefix?.kem != nil ? 1 : 0] : []
        return envelope(kind: 0x01, version: 4, body: Array(blob[6 ..< (blob.count - 16)]) + flag + [0, 0, 0, 0, 0])
    }

    static func seeds() -> [[UInt8]] {
        var blobs: [[UInt8]] = []
        must("seed sessions") {
            let random = CountingRandomSource(seed: 5)
            let kem = StandInKEM()
            let alice = try IdentityKeyPair(using: random)
            let bob = try IdentityKeyPair(using: random)
            for hybrid in [false, true] {
                let signed = try SignedPreKey(id: 3, signedBy: bob, signsKEMPreKeys: hybrid, using: random)
                let oneTime = try OneTimePreKey(id: 4, using: random)
                let kemPreKey = hybrid ? try KEMPreKey(id: 6, kind: .lastResort, signedBy: bob, kem: kem, using: random) : nil
                let preKeys = PreKeySet(signedPreKeys: [signed], oneTimePreKeys: [oneTime], kemPreKeys: kemPreKey.map { [$0] } ?? [])
                for useOneTime in [true, false] {
                    // With a one-time prekey, both parties send registration ids (SPEC §9).
                    let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: signed, oneTimePreKey: useOneTime ? oneTime : nil,
                                              kemPreKey: kemPreKey, registrationID: useOneTime ? RegistrationID(rawValue: 0x7FFF_FFFF) : nil)
                    var a = try SessionState(initiatingWith: bundle, identity: alice, localAddress: Addresses.alice,
                                             remoteAddress: hybrid ? Addresses.decomposed : Addresses.bob, kem: kem,
                                             registrationID: useOneTime ? RegistrationID(rawValue: 1) : nil, random: random)
                    blobs.append(a.serialized())
                    let first = try a.encrypt([1])
                    _ = try a.encrypt([2])
                    let third = try a.encrypt([3])
                    var b = try SessionState.accept(PreKeyMessage(serialized: third), identity: bob,
                                                    localAddress: hybrid ? Addresses.decomposed : Addresses.bob,
                                                    remoteAddress: Addresses.alice, preKeys: preKeys, kem: kem, random: random).session
                    blobs.append(b.serialized())      // responder with two skipped keys
                    _ = try b.decrypt(first, random: random)
                    let reply = try b.encrypt([4])
                    _ = try a.decrypt(reply, random: random)
                    blobs.append(a.serialized())
                    blobs.append(b.serialized())
                    // Archived by a retry notice: the body's last byte.
                    var archivedBody = Array(b.serialized().dropLast(16).dropFirst(6))
                    archivedBody[archivedBody.count - 1] = 1
                    blobs.append(envelope(kind: 0x01, version: 4, body: archivedBody))
                }
            }
        }
        return stateSeeds(blobs)
    }
}
