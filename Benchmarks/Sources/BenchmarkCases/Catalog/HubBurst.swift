import BenchmarkHarness

/// One device's side of a burst: the hub sends rounds of cheap messages (no DH ratchet step:
/// the hub keeps sending, its peers only receive), and every peer decrypts its message of each
/// round.
protocol HubBurstParties: Sendable {
    /// The number of peers.
    var peers: Int { get }
    /// Sends one message to every peer and has each decrypt it; returns the plaintexts
    /// decrypted, in peer order.
    func round() async throws -> [[UInt8]]
}

/// The workload of the `manager.burst.*` cases: a batch of `n` messages (a multiple of the
/// number of peers) is `n / peers` rounds, one after the other.
final class HubBurst<Parties: HubBurstParties> {
    let parties: Parties
    let plaintext: [UInt8]

    init(_ parties: Parties, plaintext: [UInt8]) {
        self.parties = parties
        self.plaintext = plaintext
    }

    /// Runs the rounds of `messages` messages; returns the last round's plaintexts, concatenated.
    @discardableResult
    func run(_ messages: Int) throws -> [UInt8] {
        let rounds = max(1, messages / parties.peers)
        let (parties, plaintext) = (parties, plaintext)
        return try runBlocking { () async throws -> [UInt8] in
            var last: [[UInt8]] = []
            for _ in 0..<rounds {
                last = try await parties.round()
                guard last.allSatisfy({ $0 == plaintext }) else { throw CheckFailure("manager.burst: a message decrypted to other bytes") }
            }
            return last.flatMap { $0 }
        }
    }

    /// The timed workload (`n` messages per batch) and, for the check, one round.
    var probe: Probe {
        Probe(workload: Workload { n in _ = try self.run(n) }, output: { try self.run(self.parties.peers) })
    }
}
