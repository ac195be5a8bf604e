import BenchmarkHarness

/// The floor of the `manager.hub.*` cases: the same conversations with the naive reference
/// sessions (SPEC §3–§4 composed on the backend) and nothing around them: no manager, no
/// actors, no store, no trust evaluator, no locks. The hub is Alice, the peer Bob, each session
/// created by Alice's prekey message (with a one-time prekey) and Bob's reply, as the library
/// does it.
struct ReferenceHubConversation<B: ReferenceBackend>: HubConversation {
    /// The two sessions of one conversation. Only the child task that holds the conversation
    /// during a batch touches them (`HubPingPong` joins its tasks before the next batch), hence
    /// `@unchecked Sendable`.
    final class Sessions: @unchecked Sendable {
        var hub: ReferenceSessionRecord<B>
        var peer: ReferenceSessionRecord<B>

        init(hub: ReferenceSessionRecord<B>, peer: ReferenceSessionRecord<B>) {
            self.hub = hub
            self.peer = peer
        }
    }

    let sessions: Sessions
    let plaintext: [UInt8]

    func exchange(_ count: Int, hubSendsFirst: Bool) async throws -> [UInt8] {
        var hubSends = hubSendsFirst
        var last: [UInt8] = []
        for _ in 0..<count {
            last = hubSends
                ? try sessions.peer.decrypt(try sessions.hub.encrypt(plaintext))
                : try sessions.hub.decrypt(try sessions.peer.encrypt(plaintext))
            guard last == plaintext else { throw CheckFailure("manager.hub floor: a message decrypted to other bytes") }
            hubSends.toggle()
        }
        return last
    }

    /// `peers` established conversations (each with its own ephemeral and ratchet keys), the
    /// hub sending next.
    static func pingPong(peers: Int, _ f: ProtocolFixture) throws -> HubPingPong<Self> {
        HubPingPong(try (0..<peers).map { _ in
            let (alice, bob) = try ReferenceProtocolWorkloads<B>.conversation(f)
            return Self(sessions: Sessions(hub: alice, peer: bob), plaintext: f.plaintext)
        })
    }
}
