import BenchmarkHarness
@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification

/// The library's side of the `manager.burst.*` cases: one hub `SessionManager` and one per
/// peer, each over its own `InMemoryProtocolStore` and `InMemoryTrustStore`, through the public
/// API only.
enum LibraryManagerBurst {
    struct Parties: HubBurstParties {
        let hub: SessionManager
        let hubAddress: ProtocolAddress
        let peerManagers: [SessionManager]
        let peerAddresses: [ProtocolAddress]
        let plaintext: [UInt8]

        var peers: Int { peerManagers.count }

        func send() async throws -> [[UInt8]] {
            if peerAddresses.count == 1 { return [try await hub.encrypt(plaintext, to: peerAddresses[0])] }
            return try await hub.encrypt(plaintext, toDevices: peerAddresses).map { try $0.result.get() }
        }

        func receive(_ messages: [[UInt8]]) async throws -> [[UInt8]] {
            var plaintexts: [[UInt8]] = []
            for (manager, message) in zip(peerManagers, messages) {
                plaintexts.append(try await manager.decrypt(message, from: hubAddress).plaintext)
            }
            return plaintexts
        }
    }

    /// The hub and `peers` peers with established sessions (the hub's prekey message and each
    /// peer's reply already exchanged, so that every timed message is a ratchet message and the
    /// hub sends next). Untimed.
    static func parties(peers: Int, plaintext: [UInt8]) throws -> Parties {
        try runBlocking { () async throws -> Parties in
            let hubAddress = try ProtocolAddress(userID: "hub", deviceID: 1)
            let hub = SessionManager(
                store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: hubAddress)
            var managers: [SessionManager] = []
            var addresses: [ProtocolAddress] = []
            for index in 0..<peers {
                let peerAddress = try ProtocolAddress(userID: "peer-\(index)", deviceID: 1)
                let peer = SessionManager(
                    store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: peerAddress)
                let upload = try await peer.maintainPreKeys()
                guard let bundle = upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first) else {
                    throw CheckFailure("manager.burst: the peer's upload has no signed prekey")
                }
                try await hub.processBundle(bundle, for: peerAddress)
                _ = try await peer.decrypt(try await hub.encrypt(plaintext, to: peerAddress), from: hubAddress)
                _ = try await hub.decrypt(try await peer.encrypt(plaintext, to: hubAddress), from: peerAddress)
                managers.append(peer)
                addresses.append(peerAddress)
            }
            return Parties(hub: hub, hubAddress: hubAddress, peerManagers: managers, peerAddresses: addresses, plaintext: plaintext)
        }
    }
}
