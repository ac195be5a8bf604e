import SessionKit
import Verification
import XCTest

/// The SessionKit example of README.md, compiled and run. Keep the two in sync.
final class SessionKitReadmeExampleTests: XCTestCase {
    /// The app's transport, which the README leaves out.
    private actor Outbox {
        var messages: [(ProtocolAddress, [UInt8])] = []
        func send(_ bytes: [UInt8], to address: ProtocolAddress) { messages.append((address, bytes)) }
    }

    func testTheReadmeExampleRuns() async throws {
        let outbox = Outbox()
        func send(_ bytes: [UInt8], to address: ProtocolAddress) async { await outbox.send(bytes, to: address) }

        // --- README.md, "SessionKit" ---
        // One SessionManager per device, over a store and a trust store.
        let aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let bobAddress = try ProtocolAddress(userID: "bob", deviceID: 1)
        let alice = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                                   localAddress: aliceAddress)
        let bob = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                                 localAddress: bobAddress)

        // Bob generates his prekeys and uploads the public parts. Run it again daily: it rotates
        // the signed prekey every 7 days and tops up one-time prekeys when fewer than 20 remain.
        let upload = try await bob.maintainPreKeys()

        // Alice gets a bundle for Bob's device from the server and starts a session.
        guard let bundle = upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first) else { return }
        try await alice.processBundle(bundle, for: bobAddress)

        // encrypt → (state persisted) → send;  receive → decrypt → (state persisted) → acknowledge.
        let wire = try await alice.encrypt(Array("Hi Bob".utf8), to: bobAddress)
        let text = try await bob.decrypt(wire, from: aliceAddress).plaintext
        let reply = try await bob.encrypt(Array("Hi Alice".utf8), to: aliceAddress)
        let replyText = try await alice.decrypt(reply, from: bobAddress).plaintext

        // One message to every device of a user: one outcome per device.
        for outcome in try await alice.encrypt(Array("to all of Bob's devices".utf8), toUser: "bob") {
            switch outcome.result {
            case let .success(message): await send(message, to: outcome.address)
            case .failure(.untrustedIdentity): break // Bob's key changed: show the new safety number first
            case let .failure(error): print(outcome.address, error)
            }
        }

        // Groups: send our sender key through the pairwise sessions, then encrypt once for all.
        let group = try GroupID("book club")
        for outcome in try await alice.distributeSenderKey(for: group, to: [bobAddress]) {
            if let message = outcome.ciphertext { await send(message, to: outcome.address) }
        }
        let groupMessage = try await alice.groupEncrypt(Array("Chapter 1".utf8), for: group)
        // --- end of the README example ---

        XCTAssertEqual(text, Array("Hi Bob".utf8))
        XCTAssertEqual(replyText, Array("Hi Alice".utf8))
        let sent = await outbox.messages
        XCTAssertEqual(sent.map(\.0), [bobAddress, bobAddress])
        let fannedOut = try await bob.decrypt(sent[0].1, from: aliceAddress).plaintext
        XCTAssertEqual(fannedOut, Array("to all of Bob's devices".utf8))
        try await bob.processSenderKeyDistribution(encrypted: sent[1].1, for: group, from: aliceAddress)
        let groupText = try await bob.groupDecrypt(groupMessage, for: group, from: aliceAddress)
        XCTAssertEqual(groupText, Array("Chapter 1".utf8))
    }
}
