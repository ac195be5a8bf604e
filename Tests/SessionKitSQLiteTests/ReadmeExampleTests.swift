import Foundation
import SessionKit
import SessionKitSQLite
import Verification
import XCTest

/// The SessionKitSQLite example of README.md, compiled and run (paths in a temporary folder,
/// Bob in memory). Keep the two in sync.
final class ReadmeExampleTests: XCTestCase {
    func testTheReadmeExampleRuns() async throws {
        let folder = try temporaryFolder()
        let aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let bobAddress = try ProtocolAddress(userID: "bob", deviceID: 1)
        let id = "server-message-17"
        let ms: Int64 = 1_700_000_000_000

        // --- README.md, "SessionKitSQLite" ---
        let key = try StorageKey.loadOrCreateKeyFile(at: folder.appendingPathComponent("alice.key").path)
        let store = try SQLiteProtocolStore(path: folder.appendingPathComponent("alice.sqlite").path, storageKey: key)
        let alice = SessionManager(store: store, trust: store, localAddress: aliceAddress)
        // --- (Bob, in memory, starts a session with Alice and sends the message `wire`.) ---
        let upload = try await alice.maintainPreKeys()
        let bob = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                                 localAddress: bobAddress)
        try await bob.processBundle(try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first)), for: aliceAddress)
        let wire = try await bob.encrypt(Array("Hi Alice".utf8), to: aliceAddress)
        // --- README.md, continued ---
        let message = try await alice.decrypt(wire, from: bobAddress, beforePersisting: { (received: DecryptedMessage) async throws(SessionError) in
            // Keep the plaintext in the archive before the session advances (crash consistency).
            do {
                try await store.appendArchivedMessage(received.plaintext, messageID: id, conversationID: "bob", timestamp: ms)
            } catch {
                throw .storage("archive: \(error)")   // the session is then not advanced: retry later
            }
        })
        let page = try await store.archivedMessages(inConversation: "bob", limit: 50)   // newest first; then page.nextCursor
        try store.close()   // a restart opens the same file with the same key and goes on
        // --- end of the README code ---

        XCTAssertEqual(message.plaintext, Array("Hi Alice".utf8))
        XCTAssertEqual(page.messages.map(\.messageID), [id])
        XCTAssertEqual(page.messages.first?.plaintext.bytes, Array("Hi Alice".utf8))
        let reopened = try SQLiteProtocolStore(
            path: folder.appendingPathComponent("alice.sqlite").path,
            storageKey: try StorageKey.loadOrCreateKeyFile(at: folder.appendingPathComponent("alice.key").path))
        let restarted = SessionManager(store: reopened, trust: reopened, localAddress: aliceAddress)
        let reply = try await restarted.encrypt(Array("Hi Bob".utf8), to: bobAddress)
        let atBob = try await bob.decrypt(reply, from: aliceAddress).plaintext
        XCTAssertEqual(atBob, Array("Hi Bob".utf8))
        let trust = try await reopened.status(for: bobAddress)
        XCTAssertEqual(trust, .trusted, "Bob's key was recorded on first use, with the session")
    }
}
