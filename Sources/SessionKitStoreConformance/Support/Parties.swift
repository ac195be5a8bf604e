import SessionKit

/// What every rule works with: the store under test, Bob's manager on it (through a
/// `CapturingStore`), and peers on in-memory stores.
struct Fixture: Sendable {
    /// The store under test.
    let store: any ProtocolStore
    /// The rule's expectations.
    let checker: Checker
    /// The store as Bob's manager sees it: forwarding to `store`, able to hold a commit back.
    let proxy: CapturingStore
    /// The device whose state the store keeps.
    let bobAddress: ProtocolAddress
    /// Bob's manager over `proxy`.
    let bob: SessionManager

    init(store: any ProtocolStore, checker: Checker) async throws(StoreConformanceFailure) {
        self.store = store
        self.checker = checker
        proxy = CapturingStore(base: store)
        bobAddress = try await checker.run("making an address") { try ProtocolAddress(userID: "conformance-bob", deviceID: 1) }
        bob = SessionManager(store: proxy, trust: TrustOnFirstUse(), localAddress: bobAddress)
    }

    /// A new peer device with its prekeys generated.
    func peer(_ userID: String) async throws(StoreConformanceFailure) -> Peer {
        try await checker.run("setting up the peer \(userID)") { () async throws -> Peer in
            let address = try ProtocolAddress(userID: userID, deviceID: 1)
            let identity = try IdentityKeyPair()
            let manager = SessionManager(
                store: InMemoryProtocolStore(identity: identity), trust: TrustOnFirstUse(), localAddress: address)
            return Peer(address: address, manager: manager, upload: try await manager.maintainPreKeys())
        }
    }

    /// A group id.
    func group(_ name: String) async throws(StoreConformanceFailure) -> GroupID {
        try await checker.run("making a group id") { try GroupID(name) }
    }

    /// Bob's session record with `peer` (which must be stored).
    func session(with peer: ProtocolAddress, _ what: String) async throws(StoreConformanceFailure) -> SessionRecord {
        let record = try await checker.run("loading the session record (\(what))") { try await store.loadSession(for: peer) }
        guard let record else { throw checker.failure("no session record is stored \(what)") }
        return record
    }

    /// Starts a session from Bob to `peer` (a bundle without a one-time prekey: any number of
    /// them can be made).
    func startSession(to peer: Peer) async throws(StoreConformanceFailure) {
        guard let bundle = peer.upload.bundle(oneTimePreKey: nil) else { throw checker.failure("the peer's upload has no signed prekey") }
        try await checker.run("starting a session with \(peer.address) (processBundle)") {
            try await bob.processBundle(bundle, for: peer.address)
        }
    }

    /// What the store holds for the given addresses, groups and senders.
    func view(sessions: [ProtocolAddress] = [], groups: [GroupID] = [], senders: [ProtocolAddress] = []) async throws(StoreConformanceFailure) -> StoreView {
        try await StoreView.read(store, checker: checker, sessions: sessions, groups: groups, senders: senders)
    }
}

/// A peer device on an `InMemoryProtocolStore`.
struct Peer: Sendable {
    /// Its address.
    let address: ProtocolAddress
    /// Its manager.
    let manager: SessionManager
    /// Its first upload (every prekey).
    let upload: PreKeyUpload
}

/// Trust on first use, per user id, allowing everything: the rules are about the store.
actor TrustOnFirstUse: IdentityTrustEvaluator {
    private var keys: [String: Ed25519.PublicKey] = [:]

    func evaluateIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> TrustDecision {
        TrustDecision(observation: observation(of: identityKey, for: address), allowsSending: true)
    }

    func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> IdentityObservation {
        let observed = observation(of: identityKey, for: address)
        keys[address.userID] = identityKey
        return observed
    }

    func acceptIdentity(_ identityKey: Ed25519.PublicKey, forUser userID: String) { keys[userID] = identityKey }

    private func observation(of identityKey: Ed25519.PublicKey, for address: ProtocolAddress) -> IdentityObservation {
        guard let known = keys[address.userID] else { return .firstUse }
        return known == identityKey ? .unchanged : .changed(previous: known)
    }
}
