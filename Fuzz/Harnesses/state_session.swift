// Harness `state_session`: loading a persisted `SessionState` (kind 0x01, version 5: role, generation,
// limits, both identity keys and addresses, EK_A, SHA-256(P), an initiator's pending prefix P,
// the ratchet with its skipped keys, `isPostQuantum`, the peer's registration id (u32, 0 for
// none), `isArchived`, then a u64 per skipped key: when it was stored (0: unknown); version 4,
// without the times, version 3, also without the registration id and `isArchived`, and
// version 2, also without `isPostQuantum`, are still read).
//
// Input as `loadState` reads it (whole blob, or version + body in a valid envelope).
// Invariants: failures are `invalidPayload` or `unsupportedVersion` only; a loaded session
// serializes back to the same bytes (a version-2, -3 or -4 blob to its version-5 form: the same
// body with `isPostQuantum` appended to a version 2, set exactly when its pending prefix has a
// KEM part, then no registration id and not archived for a version 2 or 3, then a time of 0
// for each skipped key: keys loaded from an older blob have no time); the times at the end of
// the body are the loaded keys' times, in the keys' order; a registration id is 1 … 2^31 − 1;
// a pending prefix with or without a KEM part agrees with `isPostQuantum`; its AD is
// IK_A || IK_B || Encode(A) || Encode(B) of its identity keys and addresses, initiator first; a
// pending prefix belongs to an initiator and carries its identity key, EK_A and digest; its
// description does not depend on its root key (the root key flipped gives the same
// description); it can encrypt (a prekey message carrying P while a prefix is pending, else a
// ratchet message), or fails with `chainExhausted` or `noSession` (no sending chain) and stays
// unchanged; raw garbage (a ratchet message and a prekey message) does not decrypt and changes
// nothing.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        guard let (session, blob) = loadState(bytes, kind: 0x01, load: { (blob: [UInt8]) throws(SessionError) in try SessionState(serialized: blob) },
                                              serialize: { (session: SessionState) in session.serialized() },
                                              normalize: versionFive) else { return }
        // The body ends with one u64 per skipped key, the keys' times in their order.
        let entries = session.skippedMessageKeyEntries
        let timesStart = blob.count - 16 - 8 * entries.count
        invariant(timesStart > 6, "a body shorter than its skipped keys' times")
        for (index, entry) in entries.enumerated() {
            let at = timesStart + 8 * index
            let encoded = blob[at ..< at + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            invariant(entry.storedAt >= 0 && UInt64(entry.storedAt) == encoded, "skipped key \(index)'s time is not the encoded one")
        }
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

    /// A version-2, -3 or -4 blob as version 5 writes it: the same body, then (version 2)
    /// `isPostQuantum` (set exactly when the pending prefix has a KEM part: the version-2
    /// reading), then (versions 2 and 3) no registration id and not archived, then a time of 0
    /// for each skipped key, whose loaded times must all be 0 (unknown). Other blobs unchanged.
    static func versionFive(_ blob: [UInt8]) -> [UInt8] {
        guard blob.count > 22, (2 ... 4).contains(blob[5]), let loaded = try? SessionState(serialized: blob) else { return blob }
        let entries = loaded.skippedMessageKeyEntries
        invariant(entries.allSatisfy { $0.storedAt == 0 }, "a skipped key of a version-\(blob[5]) session has a time")
        let flag: [UInt8] = blob[5] == 2 ? [loaded.pendingPreKeyPrefix?.kem != nil ? 1 : 0] : []
        let registrationAndArchived: [UInt8] = blob[5] < 4 ? [0, 0, 0, 0, 0] : []
        return envelope(kind: 0x01, version: 5, body: Array(blob[6 ..< (blob.count - 16)]) + flag + registrationAndArchived
                            + [UInt8](repeating: 0, count: 8 * entries.count))
    }

    /// The body of a version-5 `blob` whose skipped keys have the times `times` (big-endian
    /// u64s written over the body's last 8 × count bytes).
    static func body(of blob: [UInt8], times: [UInt64]) -> [UInt8] {
        var body = Array(blob[6 ..< (blob.count - 16)])
        let start = body.count - 8 * times.count
        for (index, time) in times.enumerated() {
            for byte in 0 ..< 8 { body[start + 8 * index + byte] = UInt8(truncatingIfNeeded: time >> (56 - 8 * UInt64(byte))) }
        }
        return body
    }

    static func seeds() -> [[UInt8]] {
        var blobs: [[UInt8]] = []
        var older: [[UInt8]] = []
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
                    // The same with the times a manager stamps (SessionConfiguration.skippedKeyMaxAge),
                    // written into the body; and as version 4 (no times; the library's keys have none
                    // yet, so version 4's body is version 5's without its zero times).
                    let skipped = b.skippedMessageKeyEntries.count
                    let blob = b.serialized()
                    blobs.append(envelope(kind: 0x01, version: 5,
                                          body: body(of: blob, times: (0 ..< skipped).map { 1_700_000_000 + UInt64($0) * 60 })))
                    if b.skippedMessageKeyEntries.allSatisfy({ $0.storedAt == 0 }) {
                        older.append(envelope(kind: 0x01, version: 4, body: Array(blob[6 ..< (blob.count - 16 - 8 * skipped)])))
                    }
                    _ = try b.decrypt(first, random: random)
                    let reply = try b.encrypt([4])
                    _ = try a.decrypt(reply, random: random)
                    blobs.append(a.serialized())
                    blobs.append(b.serialized())
                    // Archived by a retry notice: the byte before the skipped keys' times.
                    var archivedBody = Array(b.serialized().dropLast(16).dropFirst(6))
                    archivedBody[archivedBody.count - 1 - 8 * b.skippedMessageKeyEntries.count] = 1
                    blobs.append(envelope(kind: 0x01, version: SessionState.persistenceVersion, body: archivedBody))
                    // Versions 3 and 2 of the initiator without a registration id: version 4's body
                    // without the registration id and the archived mark, then also without
                    // `isPostQuantum`.
                    if !useOneTime {
                        let initiator = a.serialized()
                        let skippedByA = a.skippedMessageKeyEntries.count
                        let v3 = Array(initiator[6 ..< (initiator.count - 16 - 8 * skippedByA - 5)])
                        older.append(envelope(kind: 0x01, version: 3, body: v3))
                        older.append(envelope(kind: 0x01, version: 2, body: Array(v3.dropLast())))
                    }
                }
            }
        }
        return stateSeeds(blobs + older)
    }
}
