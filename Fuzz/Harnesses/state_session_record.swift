// Harness `state_session_record`: loading a persisted `SessionRecord` (kind 0x07, version 5:
// the current session and up to 40 previous ones, as version-5 session bodies (with their
// skipped keys' times), the post-quantum pin, then the recovery marks of SPEC §9's limits;
// version 4, the same with version-4 session bodies (no times), version 3, with version-3
// session bodies and no marks, and version 2, with version-2 session bodies and no pin, are
// still read).
//
// Input as `loadState` reads it. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; a loaded record serializes back to the same bytes (a version-4
// record to exactly the version-5 record with each session body followed by a time of 0 per
// skipped key and the same pin and marks; a version-2 or -3 record to a version-5 record that
// loads back to the same sessions, without marks, unpinned unless one of its sessions is
// post-quantum or it was pinned; the skipped keys of an older record have no time), holds at
// most 40 previous sessions and at most eight noticed failures, and no two sessions with
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
                                             normalize: versionFive) else { return }
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

    /// A version-2, -3 or -4 record as version 5 writes it. Checked here rather than rebuilt
    /// for versions 2 and 3: their sessions (older bodies) must load back the same from the
    /// version-5 form, which holds no recovery marks and, from version 2, must be pinned
    /// exactly when one of them is post-quantum (an initiator's pending prefix with a KEM
    /// part). Version 4 is rebuilt: each session body followed by its keys' times (all 0,
    /// unknown), the rest unchanged. Other blobs unchanged.
    static func versionFive(_ blob: [UInt8]) -> [UInt8] {
        guard blob.count > 22, (2 ... 4).contains(blob[5]), let loaded = try? SessionRecord(serialized: blob) else { return blob }
        let written = loaded.serialized()
        invariant(written[5] == 5, "a version-\(blob[5]) record was not written as version 5")
        guard let reloaded = try? SessionRecord(serialized: written) else { fail("a version-5 record written from version \(blob[5]) does not load") }
        let sessions = (loaded.currentSession.map { [$0] } ?? []) + loaded.previousSessions
        let again = (reloaded.currentSession.map { [$0] } ?? []) + reloaded.previousSessions
        invariant(sessions.map { $0.serialized() } == again.map { $0.serialized() }, "the sessions changed from version \(blob[5]) to 5")
        for session in sessions {
            invariant(session.skippedMessageKeyEntries.allSatisfy { $0.storedAt == 0 }, "a skipped key of a version-\(blob[5]) record has a time")
        }
        if blob[5] == 4 {
            // Version 4's body, session by session: each must be the version-5 body of the loaded
            // session without its times (8 bytes per skipped key at its end).
            let old = Array(blob[6 ..< (blob.count - 16)])
            var offset = 1
            var expected: [UInt8] = [old[0]]
            func append(_ session: SessionState) {
                let body = Array(session.serialized().dropFirst(6).dropLast(16))
                let length = body.count - 8 * session.skippedMessageKeyEntries.count
                invariant(offset + length <= old.count && Array(old[offset ..< offset + length]) == Array(body.prefix(length)),
                          "a version-4 session body is not the version-5 one without its times")
                offset += length
                expected += body
            }
            if let current = loaded.currentSession { append(current) }
            invariant(offset + 4 <= old.count, "a version-4 record without its previous count")
            expected += old[offset ..< offset + 4]
            offset += 4
            loaded.previousSessions.forEach(append)
            expected += old[offset...]
            invariant(written == envelope(kind: 0x07, version: 5, body: expected), "a version-4 record was not written as its version-5 form")
            return written
        }
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

    /// The version-4 form of `record`, whose skipped keys must have no time (the version-5 body
    /// with each session body's times dropped); nil when a key has one.
    static func versionFour(_ record: SessionRecord) -> [UInt8]? {
        let sessions = (record.currentSession.map { [$0] } ?? []) + record.previousSessions
        guard sessions.allSatisfy({ $0.skippedMessageKeyEntries.allSatisfy { $0.storedAt == 0 } }) else { return nil }
        let body = Array(record.serialized().dropFirst(6).dropLast(16))
        func stripped(_ session: SessionState) -> (kept: [UInt8], length: Int) {
            let sessionBody = Array(session.serialized().dropFirst(6).dropLast(16))
            return (Array(sessionBody.dropLast(8 * session.skippedMessageKeyEntries.count)), sessionBody.count)
        }
        var offset = 1
        var old: [UInt8] = [body[0]]
        if let current = record.currentSession {
            let (kept, length) = stripped(current)
            old += kept
            offset += length
        }
        old += body[offset ..< offset + 4]
        offset += 4
        for session in record.previousSessions {
            let (kept, length) = stripped(session)
            old += kept
            offset += length
        }
        old += body[offset...]
        return envelope(kind: 0x07, version: 4, body: old)
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
            archivedBody[archivedBody.count - 1 - 8 * record.previousSessions[0].skippedMessageKeyEntries.count] = 1
            let archived = try SessionState(serialized: envelope(kind: 0x01, version: SessionState.persistenceVersion,
                                                                 body: Array(archivedBody.dropFirst(6))))
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
            // A responder that skipped two messages, then the same session with the times a
            // manager stamps written into its body (SessionConfiguration.skippedKeyMaxAge).
            var skipping = SessionRecord()
            var initiator = try SessionState(initiatingWith: bundle, identity: alice, localAddress: Addresses.alice,
                                             remoteAddress: Addresses.bob, kem: kem, random: random)
            _ = try initiator.encrypt([1])
            _ = try initiator.encrypt([2])
            _ = try skipping.decrypt(try initiator.encrypt([3]), identity: bob, localAddress: Addresses.bob,
                                     remoteAddress: Addresses.alice, preKeys: preKeys, kem: kem, random: random)
            blobs.append(skipping.serialized())
            if let session = skipping.currentSession {
                let count = session.skippedMessageKeyEntries.count
                var body = Array(session.serialized().dropFirst(6).dropLast(16))
                for index in 0 ..< count {
                    let time = UInt64(1_700_000_000 + 60 * index)
                    for byte in 0 ..< 8 {
                        body[body.count - 8 * (count - index) + byte] = UInt8(truncatingIfNeeded: time >> (56 - 8 * UInt64(byte)))
                    }
                }
                let stamped = try SessionState(serialized: envelope(kind: 0x01, version: SessionState.persistenceVersion, body: body))
                blobs.append(try SessionRecord(restoringCurrentSession: stamped, previousSessions: record.previousSessions,
                                               requiresPostQuantum: true, recoveryMarks: marks).serialized())
            }
            // Version 4 (no times) of records whose keys have none.
            for old in [skipping, record, marked].compactMap(versionFour) { blobs.append(old) }
        }
        return stateSeeds(blobs)
    }
}
