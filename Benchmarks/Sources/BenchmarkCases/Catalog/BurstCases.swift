import BenchmarkHarness

/// A burst of cheap messages from one hub `SessionManager` (issue 18): the hub sends rounds of
/// 64-byte messages without a DH ratchet step (it keeps sending) to one peer device, or to 100
/// peer devices at once.
///
/// The figures are the hub's **messages sent per second** on the wall clock
/// (`CaseUnit.messagesPerSecond`): each message encrypted and its session stored. The peers
/// decrypt in the check only (a round on fresh parties, every plaintext compared).
///
/// - library, one peer: `encrypt(_:to:)`, one message after the other; with 100 peers: each
///   round is one `encrypt(_:toDevices:)` to all of them (every session stored in one commit).
///   In-memory stores and trust stores, classic sessions.
/// - floor: the naive reference sessions encrypting the same messages one after the other,
///   with nothing around them (no manager, actors, store, trust evaluator or locks).
///
/// The goal: a burst to 100 peers through one manager reaches at least 1.6 × the messages per
/// second of a burst to one peer.
enum BurstCases {
    /// The hub with one peer.
    static let onePeer = "manager.burst.1-peer"
    /// The hub with 100 peers at once.
    static let hundredPeers = "manager.burst.100-peers"
    /// The number of peers of `hundredPeers`.
    static let manyPeers = 100

    /// Reported against the floor; no target for the one-peer row (what the manager adds to a
    /// cheap message is what the 100-peer row amortises).
    static let onePeerTarget = RatioTargets()
    /// At least 1.6 × the messages per second of `onePeer`.
    static let manyPeersTarget = RatioTargets(baseline: BaselineTarget(caseName: onePeer, minimumThroughputRatio: 1.6))

    static var all: [BenchmarkCase] {
        let fixture = Result { try ProtocolFixture() }
        func f() throws -> ProtocolFixture { try fixture.get() }
        return [
            burst(
                name: onePeer, peers: 1, targets: onePeerTarget,
                summary: "messages sent per second (wall clock), not ns: hub SessionManager → 1 peer, 64-byte messages "
                    + "without DH step, encrypt(_:to:) one after the other, in-memory stores, classic sessions", f),
            burst(
                name: hundredPeers, peers: manyPeers, targets: manyPeersTarget,
                summary: "messages sent per second (wall clock), not ns: hub SessionManager → 100 peers, rounds of one "
                    + "encrypt(_:toDevices:) (one commit per round); target ≥ 1.6 × manager.burst.1-peer", f),
        ]
    }

    static func burst(
        name: String, peers: Int, targets: RatioTargets, summary: String, _ f: @escaping () throws -> ProtocolFixture
    ) -> BenchmarkCase {
        .probing(
            name: name, summary: summary, group: .manager, targets: targets,
            unit: .messagesPerSecond, batchMultiple: peers,
            library: {
                try HubBurst(plaintext: try f().plaintext) { try LibraryManagerBurst.parties(peers: peers, plaintext: try f().plaintext) }.probe
            },
            floor: { try HubBurst(plaintext: try f().plaintext) { try ReferenceHubBurst<SodiumBackend>.parties(peers: peers, try f()) }.probe },
            swiftCrypto: nil)
    }
}
