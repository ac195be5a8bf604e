import Foundation
import SessionKit
import SessionKitSQLite
import Verification
import XCTest

/// The code samples of SessionKitSQLite.docc/Persistence.md, compiled and run as an app would
/// write them (paths in a temporary folder instead of /var/lib/myapp; Bob in memory). Each
/// sample sits between `// --- Persistence.md` and `// --- end` markers; keep the two in sync.
final class SQLiteDocumentationExampleTests: XCTestCase {
    /// The app's server in the samples: it records acknowledgements.
    private actor Server {
        private(set) var acknowledged: [String] = []
        func acknowledge(_ envelopeID: String) throws { acknowledged.append(envelopeID) }
    }

    func testPersistenceOpenDecryptBeforePersistingArchiveAndReopen() async throws {
        let folder = try temporaryFolder()
        let keyPath = folder.appendingPathComponent("alice.key").path
        let databasePath = folder.appendingPathComponent("alice.sqlite").path
        let aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let bobAddress = try ProtocolAddress(userID: "bob", deviceID: 1)
        let server = Server()

        // --- Persistence.md, "Open the store" (from the line after the paths) ---
        let key = try StorageKey.loadOrCreateKeyFile(at: keyPath)
        let store = try SQLiteProtocolStore(path: databasePath, storageKey: key)
        let alice = SessionManager(store: store, trust: store, localAddress: aliceAddress)

        let upload = try await alice.maintainPreKeys()        // first launch: creates the prekeys
        // --- end ---

        // Bob, in memory, starts a session with Alice and sends `wire`.
        let bob = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                                 localAddress: bobAddress)
        try await bob.processBundle(try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first)), for: aliceAddress)
        let wire = try await bob.encrypt(Array("Hi Alice".utf8), to: aliceAddress)
        let envelopeID = "server-envelope-17"
        let receivedAt: Int64 = 1_700_000_000_000

        // --- Persistence.md, "Crash consistency" ---
        let message = try await alice.decrypt(wire, from: bobAddress, beforePersisting: {
            (received: DecryptedMessage) async throws(SessionError) in
            do {
                try await store.appendArchivedMessage(received.plaintext, messageID: envelopeID,
                                                      conversationID: "bob", timestamp: receivedAt)
            } catch {
                throw .storage("archive: \(error)")   // the session is not advanced: retry later
            }
        })
        try await server.acknowledge(envelopeID)
        // --- end ---

        XCTAssertEqual(message.plaintext, Array("Hi Alice".utf8))
        let acknowledged = await server.acknowledged
        XCTAssertEqual(acknowledged, [envelopeID])
        do {
            _ = try await alice.decrypt(wire, from: bobAddress)
            XCTFail("a redelivery decrypted again")
        } catch {
            XCTAssertEqual(error, .duplicateMessage, "once the commit is done, a redelivery is a duplicate")
        }

        // A step that fails leaves the session where it was: the same bytes decrypt later.
        let second = try await bob.encrypt(Array("second".utf8), to: aliceAddress)
        do {
            _ = try await alice.decrypt(second, from: bobAddress, beforePersisting: { _ async throws(SessionError) in
                throw .storage("archive: disk full")
            })
            XCTFail("the step's failure was ignored")
        } catch {
            XCTAssertEqual(error, .storage("archive: disk full"))
        }
        let retried = try await alice.decrypt(second, from: bobAddress)
        XCTAssertEqual(retried.plaintext, Array("second".utf8))

        let plaintext = Array("kept locally".utf8)
        // --- Persistence.md, "The message archive" ---
        try await store.appendArchivedMessage(plaintext, messageID: "m-17", conversationID: "bob",
                                              timestamp: 1_700_000_000_000)
        let page = try await store.archivedMessages(inConversation: "bob", limit: 50)
        for message in page.messages { show(message.plaintext) }   // newest first
        if let cursor = page.nextCursor {
            let older = try await store.archivedMessages(inConversation: "bob", limit: 50, before: cursor)
            // --- end ---
            XCTAssertTrue(older.messages.isEmpty)
        }
        XCTAssertEqual(page.messages.map(\.messageID).sorted(), [envelopeID, "m-17"].sorted())
        XCTAssertEqual(page.damagedCount, 0)

        // --- Persistence.md, "Open the store", continued ---
        try store.close()   // at exit; the next launch opens the same file with the same key
        // --- end ---

        // The next launch: the same key file, the same file, the options of "Durability".
        let path = databasePath
        let reopenedKey = try StorageKey.loadOrCreateKeyFile(at: keyPath)
        do {
            let key = reopenedKey
            // --- Persistence.md, "Durability" ---
            let options = SQLiteStoreOptions(busyTimeout: 10, durability: .powerLoss)
            let store = try SQLiteProtocolStore(path: path, storageKey: key, options: options)
            // --- end ---
            let restarted = SessionManager(store: store, trust: store, localAddress: aliceAddress)
            let reply = try await restarted.encrypt(Array("Hi Bob".utf8), to: bobAddress)
            let atBob = try await bob.decrypt(reply, from: aliceAddress)
            XCTAssertEqual(atBob.plaintext, Array("Hi Bob".utf8))
            let status = try await store.status(forUser: bobAddress.userID)
            XCTAssertEqual(status, .trusted, "Bob's key was recorded on first use, with the session")
            try store.close()
        }

        // Another key does not open the file (never an empty store).
        XCTAssertThrowsError(try SQLiteProtocolStore(path: path, storageKey: StorageKey.generate())) { error in
            XCTAssertEqual(error as? SQLiteStoreError, .wrongStorageKey)
        }
    }

    /// Shows an archived message (the app's UI).
    private func show(_ plaintext: SecureBytes) {
        XCTAssertFalse(plaintext.bytes.isEmpty)
    }
}
