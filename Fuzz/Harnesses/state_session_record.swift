// Harness `state_session_record`: loading a persisted `SessionRecord` (kind 0x07, version 4:
// the current session and up to 40 previous ones, as version-4 session bodies, the post-quantum
// pin, then the recovery marks of SPEC §9's limits; version 3, with version-3 session bodies
// and no marks, and version 2, with version-2 session bodies and no pin, are still read).
//
// Input as `loadState` reads it. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; a loaded record serializes back to the same bytes (a version-2 or
// -3 record to a version-4 record that loads back to the same sessions, without marks, unpinned
// unless one of its sessions is post-quantum or it was pinned), holds at most 40 previous
// sessions and at most eight noticed failures, and no two sessions with
// the same role and EK_A; a record holding a post-quantum session is pinned
// (`requiresPostQuantum`), and a pinned record refuses to promote a classic session, changing
// nothing; raw garbage (a ratchet
// message, a prekey message naming the EK_A of a held session and one naming an unknown EK_A)
// does not decrypt, changes nothing and draws nothing; encrypting either works or fails
// (`noSession` without a current session, `chainExhausted`) leaving the record unchanged.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let identity = must { try IdentityKeyPair(seed: fixedBytes(32, seed: 1)) }

    static func run(_ bytes: [UInt8]) {
        guard let (record, blob) = loadState(bytes, kind: 0x07, load: { (blob: [UInt8]) throws(SessionError) in try SessionRecord(serialized: blob) },
                                             serialize: { (record: SessionRecord) in record.serialized() },
                                             normalize: versionFour) else { return }
        invariant(record.previousSessions.count <= 40, "\(record.previousSessions.count) previous sessions")
        invariant(record.recoveryMarks.noticedFailures.count <= RecoveryMarks.maximumNoticedFailures, "too many noticed failures")
        invariant(record.isEmpty == (record.currentSession == nil && record.previousSessions.isEmpty), "isEmpty disagrees")
        let sessions = (record.currentSession.map { [$0] } ?? []) + record.previousSessions
        let identities = sessions.map { [$0.role.rawValue] + $0.baseKey.rawRepresentation }
        invariant(Set(identities).count == identities.count, "two sessions with the same role and EK_A")
        if sessions.contains(where: \.isPostQuantum) { invariant(record.requiresPostQuantum, "a post-quantum session and no pin") }
        if record.requiresPostQuantum, let classic = sessions.first(where: { !$0.isPostQuantum }) {
            var pinned = record
            do {
                try pinned.promote(classic)
                fail("a pinned record promoted a classic session")
            } catch {
                invariant(error == .postQuantumRequired, "promote threw \(error)")
                invariant(pinned.serialized() == blob, "a refused promotion changed the record")
            }
        }
        var copy = record
        do {
            _ = try copy.encrypt([1, 2, 3])
            invariant(record.currentSession != nil, "encrypted without a current session")
        } catch {
            invariant(error == .noSession || error == .chainExhausted, "encrypt threw \(error)")
            invariant(copy.serialized() == blob, "a failed encrypt changed the record")
        }
        // Counters 0, so that a loaded configuration with a huge MAX_SKIP costs nothing here.
        let garbage = [0x21] + [UInt8](repeating: 0x09, count: 32) + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0x5A, count: 30)
        let held = sessions.first?.baseKey.rawRepresentation ?? [UInt8](repeating: 0x09, count: 32)
        let identityKey = sessions.first?.remoteIdentityKey.rawRepresentation ?? [UInt8](repeating: 0, count: 32)
        let prefixes = [[0x22] + identityKey + held + [0, 0, 0, 3, 0], [0x22] + [UInt8](repeating: 0, count: 32) + [UInt8](repeating: 0x07, count: 32) + [0, 0, 0, 3, 0]]
        for message in [garbage] + prefixes.map({ $0 + garbage }) {
            var target = record
            let random = CountingRandomSource(seed: 1)
            do {
                _ = try target.decrypt(message, identity: identity, localAddress: Addresses.bob, remoteAddress: Addresses.alice,
                                       preKeys: PreKeySet(), kem: StandInKEM(), random: random)
                fail("garbage decrypted")
            } catch {
                invariant(target.serialized() == blob, "a failed decrypt changed the record (\(error))")
                invariant(random.draws == 0, "a failed decrypt drew from the random source")
            }
        }
    }

    /// A version-2 or -3 record as version 4 writes it. Checked here rather than rebuilt: its
    /// sessions (older bodies) must load back the same from the version-4 form, which holds no
    /// recovery marks and, from version 2, must be pinned exactly when one of them is
    /// post-quantum (an initiator's pending prefix with a KEM part). Other blobs unchanged.
    static func versionFour(_ blob: [UInt8]) -> [UInt8] {
        guard blob.count > 22, blob[5] == 2 || blob[5] == 3, let loaded = try? SessionRecord(serialized: blob) else { return blob }
        let written = loaded.serialized()
        invariant(written[5] == 4, "a version-\(blob[5]) record was not written as version 4")
        guard let reloaded = try? SessionRecord(serialized: written) else { fail("a version-4 record written from version \(blob[5]) does not load") }
        let sessions = (loaded.currentSession.map { [$0] } ?? []) + loaded.previousSessions
        let again = (reloaded.currentSession.map { [$0] } ?? []) + reloaded.previousSessions
        invariant(sessions.map { $0.serialized() } == again.map { $0.serialized() }, "the sessions changed from version \(blob[5]) to 4")
        invariant(reloaded.recoveryMarks.isEmpty, "an older record gained recovery marks")
        for session in sessions {
            invariant(session.remoteRegistrationID == nil && !session.isArchived, "an older session's registration id or archived mark")
            if blob[5] == 2 {
                invariant(session.isPostQuantum == (session.pendingPreKeyPrefix?.kem != nil), "a version-2 session's post-quantum reading")
            }
        }
        if blob[5] == 2 {
            invariant(reloaded.requiresPostQuantum == sessions.contains(where: \.isPostQuantum), "a version-2 record's pin")
        }
        return written
    }

    static func seeds() -> [[UInt8]] {
        var blobs: [[UInt8]] = [SessionRecord().serialized()]
        must("seed records") {
            let random = CountingRandomSource(seed: 6)
            let kem = StandInKEM()
            let alice = try IdentityKeyPair(using: random)
            let bob = try IdentityKeyPair(using: random)
            let signed = try SignedPreKey(id: 3, signedBy: bob, signsKEMPreKeys: true, using: random)
            let kemPreKey = try KEMPreKey(id: 1, kind: .lastResort, signedBy: bob, kem: kem, using: random)
            let bundle = PreKeyBundle(identityKey: bob.publicKey, signedPreKey: signed, oneTimePreKey: nil, kemPreKey: kemPreKey)
            var record = SessionRecord()
            for _ in 0 ..< 3 {
                try record.promote(try SessionState(initiatingWith: bundle, identity: alice, localAddress: Addresses.alice,
                                                remoteAddress: Addresses.bob, kem: kem, random: random))
                _ = try record.encrypt([9])
                blobs.append(record.serialized())
            }
            record.archiveCurrentSession()
            blobs.append(record.serialized())
            // Recovery marks (SPEC §9), built from their documented layout: a notice sent (with
            // its failure's digest) and an action (at a time before 1970); then the same record
            // with its most recent previous session archived by a notice (its body's last byte).
            let marks = try RecoveryMarks(serialized: envelope(
                kind: 0x08, version: 1,
                body: [0x03] + u32(0) + u32(1_700_000_000) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFB] + [1] + fixedBytes(16, seed: 11)))
            let marked = try SessionRecord(restoringCurrentSession: nil, previousSessions: record.previousSessions,
                                           requiresPostQuantum: true, recoveryMarks: marks)
            blobs.append(marked.serialized())
            var archivedBody = Array(record.previousSessions[0].serialized().dropLast(16))
            archivedBody[archivedBody.count - 1] = 1
            let archived = try SessionState(serialized: envelope(kind: 0x01, version: 4, body: Array(archivedBody.dropFirst(6))))
            blobs.append(try SessionRecord(restoringCurrentSession: nil, previousSessions: [archived] + record.previousSessions.dropFirst(),
                                           requiresPostQuantum: true, recoveryMarks: marks).serialized())
            var responder = SessionRecord()
            let preKeys = PreKeySet(signedPreKeys: [signed], kemPreKeys: [kemPreKey])
            for _ in 0 ..< 2 {
                var initiator = try SessionState(initiatingWith: bundle, identity: alice, localAddress: Addresses.alice,
                                                 remoteAddress: Addresses.bob, kem: kem, random: random)
                _ = try responder.decrypt(try initiator.encrypt([1]), identity: bob, localAddress: Addresses.bob,
                                          remoteAddress: Addresses.alice, preKeys: preKeys, kem: kem, random: random)
                blobs.append(responder.serialized())
            }
        }
        return stateSeeds(blobs)
    }
}
