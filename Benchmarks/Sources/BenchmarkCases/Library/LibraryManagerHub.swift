import BenchmarkHarness
@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification

/// The library's side of the `manager.hub.*` cases: one hub `SessionManager` and one
/// `SessionManager` per peer, each over its own `InMemoryProtocolStore` and the `Verification`
/// module's `InMemoryTrustStore`, through the public API only (`maintainPreKeys`,
/// `processBundle`, `encrypt(_:to:)`, `decrypt(_:from:)`). Sessions are classic (no KEM).
enum LibraryManagerHub {
    /// A conversation of the hub's manager with one peer's manager.
    struct Conversation: HubConversation {
        let hub: SessionManager
        let hubAddress: ProtocolAddress
        let peer: SessionManager
        let peerAddress: ProtocolAddress
        let plaintext: [UInt8]

        func exchange(_ count: Int, hubSendsFirst: Bool) async throws -> [UInt8] {
            var hubSends = hubSendsFirst
            var last: [UInt8] = []
            for _ in 0..<count {
                if hubSends {
                    let wire = try await hub.encrypt(plaintext, to: peerAddress)
                    last = try await peer.decrypt(wire, from: hubAddress).plaintext
                } else {
                    let wire = try await peer.encrypt(plaintext, to: hubAddress)
                    last = try await hub.decrypt(wire, from: peerAddress).plaintext
                }
                guard last == plaintext else { throw CheckFailure("manager.hub: a message decrypted to other bytes") }
                hubSends.toggle()
            }
            return last
        }
    }

    /// The hub and `peers` peers with established sessions: each peer published its prekeys
    /// (`maintainPreKeys`), the hub started a session from a bundle with a one-time prekey
    /// (`processBundle`), sent its prekey message and received the peer's reply, so that every
    /// timed message is a ratchet message (0x21) and the hub sends next. Untimed.
    static func pingPong(peers: Int, plaintext: [UInt8]) throws -> HubPingPong<Conversation> {
        HubPingPong(try runBlocking { () async throws -> [Conversation] in
            let hubAddress = try ProtocolAddress(userID: "hub", deviceID: 1)
            let hub = SessionManager(
                store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                localAddress: hubAddress)
            var conversations: [Conversation] = []
            for index in 0..<peers {
                let peerAddress = try ProtocolAddress(userID: "peer-\(index)", deviceID: 1)
                let peer = SessionManager(
                    store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                    localAddress: peerAddress)
                let upload = try await peer.maintainPreKeys()
                guard let bundle = upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first) else {
                    throw CheckFailure("manager.hub: the peer's upload has no signed prekey")
                }
                try await hub.processBundle(bundle, for: peerAddress)
                let conversation = Conversation(
                    hub: hub, hubAddress: hubAddress, peer: peer, peerAddress: peerAddress, plaintext: plaintext)
                _ = try await conversation.exchange(2, hubSendsFirst: true)
                conversations.append(conversation)
            }
            return conversations
        })
    }
}
