import SessionKit
import SessionKitMLKEM
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
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            throw XCTSkip("ML-KEM-768 needs the 26 releases on Apple platforms")
        }
        let outbox = Outbox()
        func send(_ bytes: [UInt8], to address: ProtocolAddress) async { await outbox.send(bytes, to: address) }

        // --- README.md, "SessionKit" ---
        // One SessionManager per device, over a store and a trust store. With a KEM, sessions are
        // hybrid (X3DH + ML-KEM-768); leave out `kem:` (and SessionKitMLKEM) for classic X3DH.
        let aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let bobAddress = try ProtocolAddress(userID: "bob", deviceID: 1)
        let alice = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                                   localAddress: aliceAddress, kem: SwiftCryptoMLKEM768())
        let bob = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                                 localAddress: bobAddress, kem: SwiftCryptoMLKEM768())

        // Bob generates his prekeys and uploads the public parts (they encode themselves). Run it again
        // daily: it rotates the signed prekey every 7 days and tops up one-time prekeys (and one-time
        // KEM prekeys) when fewer than 20 remain.
        let upload = try await bob.maintainPreKeys()
        let stored = try PreKeyUpload(serialized: upload.serialized) // on the server

        // The server hands out a bundle (each one-time key at most once); Alice starts a session.
        guard let bundle = stored.bundle(oneTimePreKey: stored.oneTimePreKeys.first,
                                         kemPreKey: stored.oneTimeKEMPreKeys.first) else { return }
        try await alice.processBundle(try PreKeyBundle(serialized: bundle.serialized), for: bobAddress)

        // encrypt → (state persisted) → send;  receive → decrypt → (state persisted) → acknowledge.
        // `from:` is what the transport says; a message re-attributed to another address fails.
        let wire = try await alice.encrypt(Array("Hi Bob".utf8), to: bobAddress)
        let received = try await bob.decrypt(wire, from: aliceAddress)
        let text = received.plaintext              // received.identityObservation: .firstUse
        let reply = try await bob.encrypt(Array("Hi Alice".utf8), to: aliceAddress)
        let replyText = try await alice.decrypt(reply, from: bobAddress).plaintext

        // One message to every device of a user (and, on request, our own other devices).
        for outcome in try await alice.encrypt(Array("to all of Bob's devices".utf8), toUser: "bob",
                                               includingOwnDevices: true) {
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
        XCTAssertEqual(received.identityObservation, .firstUse)
        XCTAssertTrue(received.establishedSession)
        XCTAssertEqual(wire[0], 0x22, "a prekey message")
        XCTAssertEqual(wire[69] & 0x02, 0x02, "with the KEM part: a hybrid session")
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
