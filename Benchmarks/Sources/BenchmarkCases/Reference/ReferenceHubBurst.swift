import BenchmarkHarness

/// The floor of the `manager.burst.*` cases: the same bursts with the naive reference sessions
/// and nothing around them (no manager, actors, store, trust evaluator or locks): the hub's
/// encryptions one after the other (the peers decrypt in the check only).
struct ReferenceHubBurst<B: ReferenceBackend>: HubBurstParties {
    /// One session. Only one task touches it at a time (`HubBurst` runs its rounds in turn),
    /// hence `@unchecked Sendable`.
    final class Session: @unchecked Sendable {
        var record: ReferenceSessionRecord<B>

        init(_ record: ReferenceSessionRecord<B>) { self.record = record }
    }

    let hub: [Session]
    let peer: [Session]
    let plaintext: [UInt8]

    var peers: Int { hub.count }

    func send() async throws -> [[UInt8]] {
        var wires: [[UInt8]] = []
        wires.reserveCapacity(peers)
        for session in hub { wires.append(try session.record.encrypt(plaintext)) }
        return wires
    }

    func receive(_ messages: [[UInt8]]) async throws -> [[UInt8]] {
        try zip(peer, messages).map { try $0.0.record.decrypt($0.1) }
    }

    /// `peers` established conversations (each with its own keys), the hub sending next.
    static func parties(peers: Int, _ f: ProtocolFixture) throws -> Self {
        var hub: [Session] = []
        var peer: [Session] = []
        for _ in 0..<peers {
            let (alice, bob) = try ReferenceProtocolWorkloads<B>.conversation(f)
            hub.append(Session(alice))
            peer.append(Session(bob))
        }
        return Self(hub: hub, peer: peer, plaintext: f.plaintext)
    }
}
