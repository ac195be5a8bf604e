import BenchmarkHarness

/// The floor of the `manager.burst.*` cases: the same bursts with the naive reference sessions
/// and nothing around them (no manager, actors, store, trust evaluator or locks): the hub's
/// encryptions one after the other, then the peers' decryptions in a task group.
struct ReferenceHubBurst<B: ReferenceBackend>: HubBurstParties {
    /// One session. Only one task touches it at a time (`HubBurst` runs its rounds in turn,
    /// and each peer's session is used by one child task of a round), hence `@unchecked Sendable`.
    final class Session: @unchecked Sendable {
        var record: ReferenceSessionRecord<B>

        init(_ record: ReferenceSessionRecord<B>) { self.record = record }
    }

    let hub: [Session]
    let peer: [Session]
    let plaintext: [UInt8]

    var peers: Int { hub.count }

    func round() async throws -> [[UInt8]] {
        var wires: [[UInt8]] = []
        wires.reserveCapacity(peers)
        for session in hub { wires.append(try session.record.encrypt(plaintext)) }
        if peers == 1 { return [try peer[0].record.decrypt(wires[0])] }
        let peer = peer
        return try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for (index, wire) in wires.enumerated() {
                group.addTask { (index, try peer[index].record.decrypt(wire)) }
            }
            var plaintexts = [[UInt8]](repeating: [], count: wires.count)
            for try await (index, plaintext) in group { plaintexts[index] = plaintext }
            return plaintexts
        }
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
