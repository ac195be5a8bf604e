import SessionKit

/// One transaction per commit, and prekeys (`StoreConformanceRule.atomicCommits`,
/// `.preKeyConsumption`, `.preKeyUpdates`, `.replayRecords`).
enum CommitRules {
    static func atomicity(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let alice = try await f.peer("conformance-alice")
        let carol = try await f.peer("conformance-carol")
        let group = try await f.group("conformance-atomic")
        // A session (with a stale copy), a sending chain (with a stale copy), and a receiver
        // state from Carol (with a stale copy).
        try await f.startSession(to: alice)
        let staleSession = try await f.session(with: alice.address, "after the first commit")
        try await c.run("encrypting") { _ = try await f.bob.encrypt(Array("one".utf8), to: alice.address) }
        let session = try await f.session(with: alice.address, "after encrypting")
        _ = try await c.run("creating our sending chain") { try await f.bob.senderKeyDistributionMessage(for: group) }
        let staleChain = try await SenderKeyRules.sendingChain(f, group, "after its creation")
        _ = try await c.run("encrypting to the group") { try await f.bob.groupEncrypt(Array("one".utf8), for: group) }
        let chain = try await SenderKeyRules.sendingChain(f, group, "after a group message")
        let staleState = try await SenderKeyRules.receiveDistribution(from: carol, in: group, f)
        let message = try await c.run("Carol's group message") { try await carol.manager.groupEncrypt(Array("one".utf8), for: group) }
        _ = try await c.run("decrypting Carol's group message") { try await f.bob.groupDecrypt(message, for: group, from: carol.address) }
        let state = try await SenderKeyRules.receiverState(f, group, carol.address, "after a group message")
        let pending = PendingGroupMessage(
            id: 0, group: group, sender: carol.address, message: Array("kept".utf8), expiresAt: Timestamp(secondsSince1970: 2_000_000_000))
        let view = { () async throws(StoreConformanceFailure) -> StoreView in
            try await f.view(sessions: [alice.address], groups: [group], senders: [carol.address])
        }

        var first = StoreCommit()
        first.store(session, for: alice.address)
        first.store(staleChain, for: group)
        first.store(members: [alice.address], for: group)
        first.pendingGroupMessage = pending
        try await c.refusesCommit(
            first, with: .staleState, "a commit whose sending chain is stale (with a current session, members and a pending message)",
            on: f.store, unchanged: view)
        var second = StoreCommit()
        second.store(staleSession, for: alice.address)
        second.store(chain, for: group)
        second.store(state, for: group, sender: carol.address)
        try await c.refusesCommit(
            second, with: .staleState, "a commit whose session is stale (with a current sending chain and receiver state)",
            on: f.store, unchanged: view)
        var third = StoreCommit()
        third.store(session, for: alice.address)
        third.store(chain, for: group)
        third.store(staleState, for: group, sender: carol.address)
        third.pendingGroupMessage = pending
        try await c.refusesCommit(
            third, with: .staleState, "a commit whose receiver state is stale (with a current session, sending chain and a pending message)",
            on: f.store, unchanged: view)

        var keep = StoreCommit()
        keep.pendingGroupMessage = pending
        try await c.run("a commit of a pending message") { try await f.store.commit(keep) }
        let kept = try await c.run("loading the pending messages") { try await f.store.loadPendingGroupMessages(for: group, sender: carol.address) }
        try c.expect(kept.count == 1, "\(kept.count) pending messages load after one was kept")
        var fourth = StoreCommit()
        fourth.store(staleChain, for: group)
        fourth.releasedPendingGroupMessages = kept.map(\.id)
        fourth.expiringPendingGroupMessages = Timestamp(secondsSince1970: .max)
        try await c.refusesCommit(
            fourth, with: .staleState, "a commit whose sending chain is stale (releasing and expiring pending messages)",
            on: f.store, unchanged: view)

        // Several sessions in one commit (a distribution sent to many members): one stale
        // session refuses them all.
        let dave = try await f.peer("conformance-dave")
        try await f.startSession(to: dave)
        let staleDaveSession = try await f.session(with: dave.address, "after the first commit")
        try await c.run("encrypting to Dave") { _ = try await f.bob.encrypt(Array("one".utf8), to: dave.address) }
        let daveSession = try await f.session(with: dave.address, "after encrypting")
        let bothSessions = { () async throws(StoreConformanceFailure) -> StoreView in
            try await f.view(sessions: [alice.address, dave.address])
        }
        var fifth = StoreCommit()
        fifth.store(session, for: alice.address)
        fifth.store(staleDaveSession, for: dave.address)
        try await c.refusesCommit(
            fifth, with: .staleState, "a commit of two sessions whose second is stale", on: f.store, unchanged: bothSessions)
        var sixth = StoreCommit()
        sixth.store(staleSession, for: alice.address)
        sixth.store(daveSession, for: dave.address)
        try await c.refusesCommit(
            sixth, with: .staleState, "a commit of two sessions whose first is stale", on: f.store, unchanged: bothSessions)
        var daveOnly = StoreCommit()
        daveOnly.store(daveSession, for: dave.address)
        try await c.run("a commit of one current session") { try await f.store.commit(daveOnly) }
        let newDaveSession = try await f.session(with: dave.address, "after a commit of its session alone")
        try c.expect(newDaveSession.generation == daveSession.generation + 1,
                     "a commit of Dave's current session did not store it (generation \(newDaveSession.generation))")

        // Nothing stale: everything is written.
        var all = StoreCommit()
        all.store(session, for: alice.address)
        all.store(newDaveSession, for: dave.address)
        all.store(chain, for: group)
        all.store(state, for: group, sender: carol.address)
        all.store(members: [alice.address, carol.address], for: group)
        all.releasedPendingGroupMessages = kept.map(\.id)
        all.pendingGroupMessage = PendingGroupMessage(
            id: 0, group: group, sender: carol.address, message: Array("next".utf8), expiresAt: Timestamp(secondsSince1970: 2_000_000_000))
        try await c.run("a commit with no stale part") { try await f.store.commit(all) }
        let newSession = try await f.session(with: alice.address, "after the full commit")
        let newChain = try await SenderKeyRules.sendingChain(f, group, "after the full commit")
        let newState = try await SenderKeyRules.receiverState(f, group, carol.address, "after the full commit")
        try c.expect(newSession.generation == session.generation + 1, "the full commit did not store the session (generation \(newSession.generation))")
        let lastDaveSession = try await f.session(with: dave.address, "after the full commit")
        try c.expect(lastDaveSession.generation == newDaveSession.generation + 1,
                     "the full commit did not store its second session (generation \(lastDaveSession.generation))")
        try c.expect(newChain.generation == chain.generation + 1, "the full commit did not store the sending chain (generation \(newChain.generation))")
        try c.expect(newState.generation == state.generation + 1, "the full commit did not store the receiver state (generation \(newState.generation))")
        let members = try await c.run("loading the members") { try await f.store.loadGroupMembers(for: group) }
        try c.expect(members == [alice.address, carol.address], "the full commit stored \(members.count) members, expected 2")
        let left = try await c.run("loading the pending messages") { try await f.store.loadPendingGroupMessages(for: group, sender: carol.address) }
        try c.expect(left.map(\.message) == [Array("next".utf8)],
                     "after the full commit \(left.count) pending messages load, expected the new one only (the released one deleted)")
    }

    static func preKeyConsumption(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let upload = try await c.run("generating Bob's prekeys (maintainPreKeys)") { try await f.bob.maintainPreKeys() }
        guard upload.oneTimePreKeys.count >= 2,
              let shared = upload.bundle(oneTimePreKey: upload.oneTimePreKeys[0]),
              let other = upload.bundle(oneTimePreKey: upload.oneTimePreKeys[1])
        else { throw c.failure("Bob's first upload has no signed prekey or fewer than 2 one-time prekeys") }
        // Two initiators get the same one-time prekey (a misbehaving server), a third another one.
        let first = try await f.peer("conformance-alice-1")
        let second = try await f.peer("conformance-alice-2")
        let third = try await f.peer("conformance-alice-3")
        var messages: [[UInt8]] = []
        for (peer, bundle) in [(first, shared), (second, shared), (third, other)] {
            messages.append(try await c.run("\(peer.address) starting a session with Bob") { () async throws -> [UInt8] in
                try await peer.manager.processBundle(bundle, for: f.bobAddress)
                return try await peer.manager.encrypt(Array("hello".utf8), to: f.bobAddress)
            })
        }
        let held = try await heldBack(f, messages[1], from: second.address)
        let heldThird = try await heldBack(f, messages[2], from: third.address)

        // A stale commit that uses a one-time prekey still held consumes nothing.
        try await f.startSession(to: third)
        try await c.refusesCommit(
            heldThird, with: .staleState, "a stale commit (its session record was written meanwhile) that uses a one-time prekey",
            on: f.store, unchanged: { () async throws(StoreConformanceFailure) -> StoreView in try await f.view(sessions: [third.address]) })

        // The first initiator's message consumes the shared one-time prekey...
        let decrypted = try await c.run("decrypting the first initiator's prekey message") {
            try await f.bob.decrypt(messages[0], from: first.address)
        }
        try c.expect(decrypted.plaintext == Array("hello".utf8), "the first prekey message decrypted to other bytes")
        // ...so the commit that would create a second session with it is refused.
        try await c.refusesCommit(
            held, with: .unknownPreKey, "a second commit that uses a one-time prekey a commit already used",
            on: f.store, unchanged: { () async throws(StoreConformanceFailure) -> StoreView in try await f.view(sessions: [second.address]) })
        // The manager reports the same for the second initiator's message.
        try await c.refuses(.unknownPreKey, "decrypting the second prekey message that uses the same one-time prekey") {
            _ = try await f.bob.decrypt(messages[1], from: second.address)
        }
    }

    static func preKeyUpdates(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let initial = try await c.run("loading the prekeys of a new store") { try await f.store.loadPreKeys() }
        try c.expect(initial == nil, "a new store from makeStore already holds prekeys (it must be empty)")
        _ = try await c.run("generating prekeys (maintainPreKeys)") { try await f.bob.maintainPreKeys() }
        let stored = try await c.run("loading the prekeys") { try await f.store.loadPreKeys() }
        guard let stored else { throw c.failure("the prekeys maintainPreKeys stored do not load") }
        let blob = stored.serialized()

        try await c.refuses(.invalidPayload, "an update that throws") {
            try await f.store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in
                keys = nil
                throw .invalidPayload
            }
        }
        let afterFailure = try await c.run("loading the prekeys") { try await f.store.loadPreKeys() }
        try c.expect(afterFailure?.serialized() == blob, "an update that threw changed the stored prekeys")

        // Another device's prekeys, stored whole by an update that returns.
        let identity = try await c.run("reading the local identity") { try await f.store.localIdentity() }
        let replacement = try await c.run("generating other prekeys") { () async throws -> [UInt8] in
            let other = InMemoryProtocolStore(identity: identity)
            let manager = SessionManager(store: other, trust: TrustOnFirstUse(), localAddress: f.bobAddress)
            _ = try await manager.maintainPreKeys()
            guard let keys = await other.loadPreKeys() else { throw SessionError.invalidPayload }
            return keys.serialized()
        }
        let result = try await c.run("an update that returns") { () async throws -> Int in
            try await f.store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) -> Int in
                keys = try LocalPreKeys(serialized: replacement)
                return 7
            }
        }
        try c.expect(result == 7, "updatePreKeys returned \(result), not what the update returned (7)")
        let afterUpdate = try await c.run("loading the prekeys") { try await f.store.loadPreKeys() }
        try c.expect(afterUpdate?.serialized() == replacement, "the prekeys an update left were not stored")
    }

    static func replayRecords(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let upload = try await c.run("generating Bob's prekeys (maintainPreKeys)") { try await f.bob.maintainPreKeys() }
        guard let bundle = upload.bundle(oneTimePreKey: nil) else { throw c.failure("Bob's first upload has no signed prekey") }
        let alice = try await f.peer("conformance-alice")
        let message = try await c.run("\(alice.address) starting a session with Bob") { () async throws -> [UInt8] in
            try await alice.manager.processBundle(bundle, for: f.bobAddress)
            return try await alice.manager.encrypt(Array("hello".utf8), to: f.bobAddress)
        }
        // SPEC §4: 0x22 || IK_A (32) || EK_A (32) || u32(spk_id) || ...
        let record = try await c.run("reading EK_A from the prekey message") { () throws -> BaseKeyRecord in
            BaseKeyRecord(signedPreKeyID: bundle.signedPreKeyID, baseKey: try X25519.PublicKey(rawRepresentation: Array(message[33 ..< 65])))
        }
        func isRecorded(_ what: String) async throws(StoreConformanceFailure) -> Bool {
            try await c.run("looking the record up (hasRecordedBaseKey, \(what))") {
                try await f.store.hasRecordedBaseKey(record.baseKey, signedPreKeyID: record.signedPreKeyID)
            }
        }
        try c.expect(try await isRecorded("before any commit") == false, "a new store holds a replay record")
        let held = try await heldBack(f, message, from: alice.address)
        try c.expect(held.baseKeyRecord == record, "the commit of a prekey message does not carry its EK_A record")
        try c.expect(try await isRecorded("after a commit was held back") == false, "a record is held though its commit never reached the store")

        // The commit adds the record, in its transaction.
        _ = try await c.run("decrypting the prekey message") { try await f.bob.decrypt(message, from: alice.address) }
        try c.expect(try await isRecorded("after the commit"), "the commit of a prekey message did not add its EK_A record")

        // The session goes; the held-back commit (its session matches generation 0 again) would
        // create a second session from the same EK_A: the record refuses it.
        try await c.run("deleting Bob's session with \(alice.address)") { try await f.store.deleteSession(for: alice.address) }
        try await c.refusesCommit(
            held, with: .staleState, "a commit whose EK_A record the store holds already (its session deleted meanwhile)",
            on: f.store, unchanged: { () async throws(StoreConformanceFailure) -> StoreView in try await f.view(sessions: [alice.address]) })
        // The manager finds the record before any DH.
        try await c.refuses(.duplicateMessage, "decrypting the prekey message again once its session is gone") {
            _ = try await f.bob.decrypt(message, from: alice.address)
        }

        // An update that throws deletes nothing; one that replaces the signed prekey deletes its records.
        try await c.refuses(.invalidPayload, "an update that throws") {
            try await f.store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in
                keys = nil
                throw .invalidPayload
            }
        }
        try c.expect(try await isRecorded("after an update that threw"), "an update that threw deleted a replay record")
        let identity = try await c.run("reading the local identity") { try await f.store.localIdentity() }
        let replacement = try await c.run("generating other prekeys") { () async throws -> [UInt8] in
            let other = InMemoryProtocolStore(identity: identity)
            let manager = SessionManager(store: other, trust: TrustOnFirstUse(), localAddress: f.bobAddress)
            _ = try await manager.maintainPreKeys()
            guard let keys = await other.loadPreKeys() else { throw SessionError.invalidPayload }
            return keys.serialized()
        }
        try await c.run("an update that replaces the prekeys (another signed prekey under the same id)") {
            try await f.store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in
                keys = try LocalPreKeys(serialized: replacement)
            }
        }
        try c.expect(try await isRecorded("after its signed prekey was replaced") == false,
                     "the replay record of a signed prekey an update replaced was kept")
    }

    /// The commit Bob's manager makes for `message` from `sender`, held back (nothing written).
    private static func heldBack(_ f: Fixture, _ message: [UInt8], from sender: ProtocolAddress) async throws(StoreConformanceFailure) -> StoreCommit {
        let c = f.checker
        await f.proxy.captureNextCommit()
        try await c.refuses(.storage("held back by the store conformance kit"), "decrypting a prekey message (its commit held back)") {
            _ = try await f.bob.decrypt(message, from: sender)
        }
        guard let commit = await f.proxy.captured, commit.changesPreKeys, commit.sessions.count == 1 else {
            throw c.failure("the commit of a prekey message was not held back, or does not use a prekey")
        }
        return commit
    }
}
