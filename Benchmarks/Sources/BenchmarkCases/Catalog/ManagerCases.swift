import BenchmarkHarness

/// The throughput of `SessionManager` (issue 11): a hub device exchanging 64-byte messages in
/// ping-pong with one peer device, and with 100 peer devices at once.
///
/// The figures are **messages per second** (`CaseUnit.messagesPerSecond`, stored in
/// `latest.json`'s `library_ns` and `floor_ns`), timed on the wall clock. A message counts once,
/// when its sender has encrypted it and its receiver decrypted it; the hub is one end of every
/// message, so this is also the hub's encryptions plus decryptions per second. Every message
/// is a ratchet message whose decryption performs a DH ratchet step (ping-pong).
///
/// - library: one hub `SessionManager` and one `SessionManager` per peer, each over its own
///   `InMemoryProtocolStore` and `InMemoryTrustStore`, classic sessions;
/// - floor: the same conversations on the naive reference sessions (libsodium), with nothing
///   around them (no actors, store, trust evaluator or locks), driven the same way, so that
///   library / floor is what the manager adds at the same concurrency.
///
/// Both rows run their conversations in a task group, each conversation sequential (hub
/// encrypts → peer decrypts → peer encrypts → hub decrypts → …); a batch spreads its messages
/// evenly over the conversations and is a multiple of one round trip per conversation.
enum ManagerCases {
    /// The hub with one peer.
    static let onePeer = "manager.hub.1-peer"
    /// The hub with 100 peers at once.
    static let hundredPeers = "manager.hub.100-peers"
    /// The number of peers of `hundredPeers`.
    static let manyPeers = 100

    /// The manager adds at most 10 % to the naive sessions' time per message.
    static let onePeerTarget = RatioTargets(floor: 1.10)
    /// The same, and at least 1.6 × the messages per second of the hub with one peer (the
    /// manager runs its cryptography off the actor, so 100 conversations use every core).
    static let manyPeersTarget = RatioTargets(
        floor: 1.10, baseline: BaselineTarget(caseName: onePeer, minimumThroughputRatio: 1.6))

    static var all: [BenchmarkCase] {
        // The fixture draws random keys; should that ever fail, the cases report it one by one.
        let fixture = Result { try ProtocolFixture() }
        func f() throws -> ProtocolFixture { try fixture.get() }
        return [
            hub(
                name: onePeer, peers: 1, targets: onePeerTarget,
                summary: "messages per second (wall clock), not ns: hub SessionManager ⇄ 1 peer manager, "
                    + "64-byte ping-pong (a DH ratchet step per message), in-memory stores, classic sessions; "
                    + "a message = its encryption + decryption", f),
            hub(
                name: hundredPeers, peers: manyPeers, targets: manyPeersTarget,
                summary: "messages per second (wall clock), not ns: hub SessionManager ⇄ 100 peer managers at once "
                    + "(task group, each conversation sequential 64-byte ping-pong), in-memory stores, classic sessions; "
                    + "target ≥ 1.6 × manager.hub.1-peer", f),
        ]
    }

    /// A hub case with `peers` conversations.
    static func hub(
        name: String, peers: Int, targets: RatioTargets, summary: String, _ f: @escaping () throws -> ProtocolFixture
    ) -> BenchmarkCase {
        .probing(
            name: name, summary: summary, group: .manager, targets: targets,
            unit: .messagesPerSecond, batchMultiple: 2 * peers,
            library: { try LibraryManagerHub.pingPong(peers: peers, plaintext: try f().plaintext).probe },
            floor: { try ReferenceHubConversation<SodiumBackend>.pingPong(peers: peers, try f()).probe },
            swiftCrypto: nil)
    }
}
