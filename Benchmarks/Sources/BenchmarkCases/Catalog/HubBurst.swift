import BenchmarkHarness

/// The parties of a burst: a hub that sends rounds of cheap messages (no DH ratchet step: the
/// hub keeps sending) to its peers, and the peers, who decrypt only for the check.
protocol HubBurstParties: Sendable {
    /// The number of peers.
    var peers: Int { get }
    /// Sends one message to every peer; returns the messages, in peer order.
    func send() async throws -> [[UInt8]]
    /// Has each peer decrypt its message of a round (`send()`'s result); returns the plaintexts.
    func receive(_ messages: [[UInt8]]) async throws -> [[UInt8]]
}

/// The workload of the `manager.burst.*` cases: a batch of `n` messages (a multiple of the
/// number of peers) is `n / peers` rounds sent by the hub, one after the other. The figure is
/// the hub's: messages sent (encrypted and stored) per second. The check runs on fresh parties
/// (a peer that missed more than MAX_SKIP messages could not decrypt): one round, which every
/// peer must decrypt to the plaintext.
final class HubBurst<Parties: HubBurstParties> {
    let parties: Parties
    let plaintext: [UInt8]
    let fresh: () throws -> Parties

    init(plaintext: [UInt8], _ make: @escaping () throws -> Parties) throws {
        self.parties = try make()
        self.plaintext = plaintext
        self.fresh = make
    }

    /// Sends the rounds of `messages` messages.
    func run(_ messages: Int) throws {
        let rounds = max(1, messages / parties.peers)
        let parties = parties
        _ = try runBlocking { () async throws -> Int in
            var sent = 0
            for _ in 0..<rounds { sent += try await parties.send().count }
            return sent
        }
    }

    /// One round on fresh parties, decrypted by every peer: the plaintexts, concatenated.
    func check() throws -> [UInt8] {
        let (checked, plaintext) = (try fresh(), plaintext)
        return try runBlocking { () async throws -> [UInt8] in
            let received = try await checked.receive(try await checked.send())
            guard received.count == checked.peers, received.allSatisfy({ $0 == plaintext }) else {
                throw CheckFailure("manager.burst: a message decrypted to other bytes")
            }
            return received.flatMap { $0 }
        }
    }

    /// The timed workload (`n` messages per batch) and the check.
    var probe: Probe {
        Probe(workload: Workload { n in try self.run(n) }, output: { try self.check() })
    }
}
