// Harness `state_session_record`: loading a persisted `SessionRecord` (kind 0x07).
//
// Input as `loadState` reads it. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; a loaded record serializes back to the same bytes and holds at
// most 40 previous sessions; raw garbage does not decrypt and changes nothing; encrypting
// either works or fails (`noSession` without a current session, `chainExhausted`) leaving the
// record unchanged.
import SessionKit
import SignalPrimitives

enum Harness {
    static let identity: IdentityKeyPair = {
        do { return try IdentityKeyPair(seed: fixedBytes(32, seed: 1)) } catch { fail("identity") }
    }()

    static func run(_ bytes: [UInt8]) {
        guard let (record, blob) = loadState(bytes, kind: 0x07, load: { (blob: [UInt8]) throws(SessionError) in try SessionRecord(serialized: blob) },
                                             serialize: { $0.serialized() }) else { return }
        invariant(record.previousSessions.count <= 40, "\(record.previousSessions.count) previous sessions")
        invariant(record.isEmpty == (record.currentSession == nil && record.previousSessions.isEmpty), "isEmpty disagrees")
        var copy = record
        do {
            _ = try copy.encrypt([1, 2, 3])
            invariant(record.currentSession != nil, "encrypted without a current session")
        } catch {
            invariant(error == .noSession || error == .chainExhausted, "encrypt threw \(error)")
            invariant(copy.serialized() == blob, "a failed encrypt changed the record")
        }
        var target = record
        // Counters 0, so that a loaded configuration with a huge MAX_SKIP costs nothing here.
        let garbage = [0x01] + [UInt8](repeating: 0x09, count: 32) + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0x5A, count: 30)
        let prefix = [0x02] + [UInt8](repeating: 0x00, count: 32) + [UInt8](repeating: 0x09, count: 32) + [0, 0, 0, 3, 0]
        for garbage in [garbage, prefix + garbage] {
            do {
                _ = try target.decrypt(garbage, identity: identity, preKeys: PreKeySet(), random: CountingRandomSource(seed: 1))
                fail("garbage decrypted")
            } catch {
                invariant(target.serialized() == blob, "a failed decrypt changed the record (\(error))")
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        var blobs: [[UInt8]] = [SessionRecord().serialized()]
        do {
            let random = CountingRandomSource(seed: 6)
            let alice = try IdentityKeyPair(using: random)
            let bob = try IdentityKeyPair(using: random)
            let signed = try SignedPreKey(id: 3, signedBy: bob, using: random)
            let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: signed, oneTimePreKey: nil)
            var record = SessionRecord()
            for _ in 0 ..< 3 {
                record.promote(try SessionState(initiatingWith: bundle, identity: alice, random: random))
                _ = try record.encrypt([9])
                blobs.append(record.serialized())
            }
            record.archiveCurrentSession()
            blobs.append(record.serialized())
            var responder = SessionRecord()
            var initiator = try SessionState(initiatingWith: bundle, identity: alice, random: random)
            _ = try responder.decrypt(try initiator.encrypt([1]), identity: bob, preKeys: PreKeySet(signedPreKeys: [signed]), random: random)
            blobs.append(responder.serialized())
        } catch {
            fail("seed records: \(error)")
        }
        return stateSeeds(blobs)
    }
}
