import SessionKit

/// The registration id and what a manager notes about recovery (`StoreConformanceRule.recovery`).
enum RecoveryRules {
    static func recovery(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let first = try await c.run("reading the registration id") { try await f.store.localRegistrationID() }
        let second = try await c.run("reading the registration id again") { try await f.store.localRegistrationID() }
        try c.expect(first == second, "localRegistrationID() gave \(first), then \(second): it must not change")

        // A session in both directions, so that Alice sends ratchet messages to Bob.
        let alice = try await f.peer("conformance-alice")
        try await f.startSession(to: alice)
        let hello = try await c.run("encrypting to the peer") { try await f.bob.encryptEnvelope(Array("hello".utf8), to: alice.address) }
        _ = try await c.run("the peer receiving") { try await alice.manager.receive(hello) }
        let reply = try await c.run("the peer replying") { try await alice.manager.encryptEnvelope(Array("reply".utf8), to: f.bobAddress) }
        _ = try await c.run("receiving the reply") { try await f.bob.receive(reply) }

        // Two messages on ratchet keys no session of Bob's knows: the first gets a retry notice,
        // which Bob's manager notes in the record; the second, right after, gets none, unless
        // the store lost the note.
        func forged(_ keySeed: UInt8) async throws(StoreConformanceFailure) -> MessageEnvelope {
            let message = try await c.run("the peer encrypting") { try await alice.manager.encryptEnvelope(Array("x".utf8), to: f.bobAddress) }
            var body = message.body
            let key = try await c.run("making a ratchet key") {
                try X25519.PrivateKey(rawRepresentation: [UInt8](repeating: keySeed, count: 32)).publicKey.rawRepresentation
            }
            body.replaceSubrange(1 ..< 33, with: key)
            return try await c.run("making an envelope") {
                try MessageEnvelope(sender: alice.address, recipient: f.bobAddress, kind: .message, body: body)
            }
        }
        let before = try await f.session(with: alice.address, "before the undecryptable messages")
        let firstFailure = try await c.run("receiving an undecryptable message") { try await f.bob.receive(try await forged(3)) }
        guard case let .undecryptable(noted) = firstFailure, noted.retryNotice != nil else {
            throw c.failure("the first undecryptable message got \(firstFailure), expected an undecryptable message with a retry notice")
        }
        let after = try await f.session(with: alice.address, "after the notice was noted")
        try c.expect(after.generation == before.generation + 1, "noting the notice stored generation \(after.generation) over \(before.generation)")
        try c.expect(after.serialized() != before.serialized(),
                     "the record with the note loads as it was before the note: the store lost the recovery marks (SessionRecord.recoveryMarks)")
        let secondFailure = try await c.run("receiving another undecryptable message") { try await f.bob.receive(try await forged(5)) }
        guard case let .undecryptable(limited) = secondFailure else {
            throw c.failure("the second undecryptable message got \(secondFailure)")
        }
        try c.expect(limited.retryNotice == nil,
                     "a second notice within the hour: the store lost the recovery marks of the record (SessionRecord.recoveryMarks)")
    }
}
