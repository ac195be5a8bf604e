import BenchmarkHarness

/// A burst of cheap messages from one hub `SessionManager` (issue 18): the hub sends rounds of
/// 64-byte messages without a DH ratchet step (it keeps sending; the peers only receive) to one
/// peer device, or to 100 peer devices at once, and every peer decrypts each of its messages.
///
/// The figures are **messages per second** on the wall clock (`CaseUnit.messagesPerSecond`); a
/// message counts once, when its peer has decrypted it.
///
/// - library, one peer: `encrypt(_:to:)` then the peer's `decrypt(_:from:)`, one message after
///   the other; with 100 peers: each round is one `encrypt(_:toDevices:)` to all of them (every
///   session stored in one commit), then the peers decrypt at once (a task group). In-memory
///   stores and trust stores, classic sessions.
/// - floor: the naive reference sessions doing the same (the hub's encryptions one after the
///   other, the peers' decryptions in a task group), with nothing around them.
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
                summary: "messages per second (wall clock), not ns: hub SessionManager → 1 peer manager, 64-byte messages "
                    + "without DH step (encrypt(_:to:), then the peer's decrypt), in-memory stores, classic sessions", f),
            burst(
                name: hundredPeers, peers: manyPeers, targets: manyPeersTarget,
                summary: "messages per second (wall clock), not ns: hub SessionManager → 100 peer managers, rounds of one "
                    + "encrypt(_:toDevices:) (one commit) then the peers' decrypts at once; target ≥ 1.6 × manager.burst.1-peer", f),
        ]
    }

    static func burst(
        name: String, peers: Int, targets: RatioTargets, summary: String, _ f: @escaping () throws -> ProtocolFixture
    ) -> BenchmarkCase {
        .probing(
            name: name, summary: summary, group: .manager, targets: targets,
            unit: .messagesPerSecond, batchMultiple: peers,
            library: { try HubBurst(try LibraryManagerBurst.parties(peers: peers, plaintext: try f().plaintext), plaintext: try f().plaintext).probe },
            floor: { try HubBurst(try ReferenceHubBurst<SodiumBackend>.parties(peers: peers, try f()), plaintext: try f().plaintext).probe },
            swiftCrypto: nil)
    }
}
