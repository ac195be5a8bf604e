import BenchmarkHarness
import Foundation
@_spi(Testing) import SessionKit
import SessionKitSQLite
import SignalPrimitives
@_spi(Testing) import Verification

/// Bob's device in the `store.sqlite.*` cases: a `SessionManager` whose every encryption and
/// decryption is persisted to an SQLite file before it returns (the library's
/// `SQLiteProtocolStore`, or the naive whole-blob store of the floor).
protocol PersistingDevice: AnyObject, Sendable {
    /// The device's address.
    var address: ProtocolAddress { get }
    /// The manager (its store holds the device's prekeys and sessions).
    var manager: SessionManager { get }
    /// Encrypts `plaintext` to `peer` and persists the advanced record.
    func encrypt(_ plaintext: [UInt8], to peer: ProtocolAddress) async throws -> [UInt8]
    /// Decrypts `message` from `peer` and persists the advanced record; returns the plaintext.
    func decrypt(_ message: [UInt8], from peer: ProtocolAddress) async throws -> [UInt8]
    /// Copies the WAL into the database file and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`),
    /// so that everything written since the last checkpoint is in the file, written once.
    func checkpoint() throws
    /// The record of `peer` as the manager sees it and as the file holds it (read anew),
    /// serialized, for the check that what was persisted is the state in use.
    func recordBytes(of peer: ProtocolAddress) async throws -> (live: [UInt8], persisted: [UInt8])
}

/// A folder under the system's temporary directory (`FileManager.temporaryDirectory`, `/tmp`
/// on Linux), removed with everything in it when the last reference goes, or at the latest
/// when the process exits (`bench --count` exits right after its operations, possibly before
/// the runtime has released the last task that held a device).
final class TemporaryFolder: Sendable {
    /// The folder.
    let url: URL

    /// Creates a new empty folder named `sessionkit-bench-<UUID>`.
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sessionkit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        LiveFolders.shared.insert(url)
    }

    /// The path of `name` in the folder.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit {
        try? FileManager.default.removeItem(at: url)
        LiveFolders.shared.remove(url)
    }
}

/// The temporary folders not yet removed, removed by an `atexit` handler.
private final class LiveFolders: @unchecked Sendable {
    /// The process's registry (its `atexit` handler is installed on first use).
    static let shared: LiveFolders = {
        let folders = LiveFolders()
        atexit { LiveFolders.shared.removeAll() }
        return folders
    }()

    /// Guards `urls` (folders are created and released on several threads).
    private let lock = NSLock()
    private var urls: Set<URL> = []

    func insert(_ url: URL) { lock.withLock { _ = urls.insert(url) } }

    func remove(_ url: URL) { lock.withLock { _ = urls.remove(url) } }

    /// Removes every folder still registered.
    func removeAll() {
        let remaining = lock.withLock { () -> Set<URL> in
            defer { urls = [] }
            return urls
        }
        for url in remaining { try? FileManager.default.removeItem(at: url) }
    }
}

/// Alice (in memory) and Bob (a `PersistingDevice`) with an established session, driven in
/// synchronous batches for the harness.
///
/// The set-up (untimed) follows `SessionStorageTests.testPersistingAMessageRewritesOnlyTheRecordRowWhateverTheHistory`:
/// Bob publishes his prekeys; Alice, whose `SessionManager` runs over an
/// `InMemoryProtocolStore` and `InMemoryTrustStore`, starts a session from Bob's bundle and
/// sends a message Bob decrypts. For the heavy device she does it 41 times from a bundle with
/// no one-time prekey (Bob's record then holds 40 previous sessions), then 8 times sends 250
/// messages Bob never gets and one he decrypts (2,000 skipped message keys on his current
/// session). The set-up ends with a `wal_checkpoint(TRUNCATE)`.
final class StoreConversation<Device: PersistingDevice> {
    /// Alice's address.
    static var aliceAddress: ProtocolAddress {
        get throws { try ProtocolAddress(userID: "alice", deviceID: 1) }
    }

    /// The in-memory peer.
    let alice: SessionManager
    let aliceAddress: ProtocolAddress
    /// The device whose store is measured.
    let bob: Device
    /// The 64 bytes every message carries.
    let plaintext: [UInt8]
    /// Messages from Alice that Bob decrypts in the next batch, in order.
    private var pending: [[UInt8]] = []

    /// Establishes the session (heavy: 40 previous sessions and 2,000 skipped keys on Bob's
    /// side; with `skippedOnEverySession` as well, each of the 41 sessions holds 2,000 skipped keys).
    init(bob: Device, heavy: Bool, skippedOnEverySession: Bool = false, plaintext: [UInt8]) throws {
        let aliceAddress = try Self.aliceAddress
        let alice = SessionManager(
            store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
            localAddress: aliceAddress)
        try runBlocking { () async throws -> Void in
            let upload = try await bob.manager.maintainPreKeys()
            guard let bundle = upload.bundle(oneTimePreKey: heavy ? nil : upload.oneTimePreKeys.first) else {
                throw CheckFailure("store.sqlite: Bob's upload has no signed prekey")
            }
            for _ in 0..<(heavy ? 41 : 1) {
                try await alice.processBundle(bundle, for: bob.address)
                _ = try await bob.decrypt(try await alice.encrypt(plaintext, to: bob.address), from: aliceAddress)
                guard skippedOnEverySession else { continue }
                for _ in 0..<8 {
                    for _ in 0..<250 { _ = try await alice.encrypt(plaintext, to: bob.address) }
                    _ = try await bob.decrypt(try await alice.encrypt(plaintext, to: bob.address), from: aliceAddress)
                }
            }
            guard heavy, !skippedOnEverySession else { return }
            for _ in 0..<8 {
                for _ in 0..<250 { _ = try await alice.encrypt(plaintext, to: bob.address) }
                _ = try await bob.decrypt(try await alice.encrypt(plaintext, to: bob.address), from: aliceAddress)
            }
        }
        // The set-up's pages go into the file now, so that no measured batch (in particular
        // the first, which calibrates the batch size) copies them at its checkpoint.
        try bob.checkpoint()
        self.alice = alice
        self.aliceAddress = aliceAddress
        self.bob = bob
        self.plaintext = plaintext
    }

    /// Alice encrypts `count` messages to Bob (untimed: she is in memory and writes nothing).
    func prepareIncoming(_ count: Int) throws {
        let (alice, plaintext, bob) = (alice, plaintext, bob.address)
        pending = try runBlocking { () async throws -> [[UInt8]] in
            var messages: [[UInt8]] = []
            messages.reserveCapacity(count)
            for _ in 0..<count { messages.append(try await alice.encrypt(plaintext, to: bob)) }
            return messages
        }
    }

    /// Bob decrypts the prepared messages in order, each one persisted; checks every plaintext.
    func decryptPending() throws {
        let (messages, bob, alice, plaintext) = (pending, bob, aliceAddress, plaintext)
        pending = []
        try runBlocking { () async throws -> Void in
            for message in messages {
                guard try await bob.decrypt(message, from: alice) == plaintext else {
                    throw CheckFailure("store.sqlite: a message decrypted to other bytes")
                }
            }
        }
    }

    /// Bob encrypts `count` messages to Alice, each one persisted (she never reads them).
    func encryptOutgoing(_ count: Int) throws {
        let (bob, alice, plaintext) = (bob, aliceAddress, plaintext)
        try runBlocking { () async throws -> Void in
            for _ in 0..<count { blackHole(try await bob.encrypt(plaintext, to: alice)) }
        }
    }

    /// The record counts of Bob's record of Alice: previous sessions and skipped message keys
    /// of the current session (40 and 2,000 for the heavy device).
    func bobRecordShape() throws -> (previous: Int, skipped: Int) {
        let (bob, alice) = (bob, aliceAddress)
        return try runBlocking { () async throws -> (Int, Int) in
            let (live, _) = try await bob.recordBytes(of: alice)
            let record = try SessionRecord(serialized: live)
            return (record.previousSessions.count, record.currentSession?.skippedMessageKeyCount ?? 0)
        }
    }

    /// Throws unless the file holds the record Bob's manager uses.
    func checkPersisted() throws {
        let (bob, alice) = (bob, aliceAddress)
        let (live, persisted) = try runBlocking { () async throws -> ([UInt8], [UInt8]) in try await bob.recordBytes(of: alice) }
        try CheckFailure.expect(live == persisted, "store.sqlite: the file does not hold the record in use")
    }

    // MARK: Probes

    /// `store.sqlite.decrypt` and the bytes rows: Alice's messages, prepared untimed, decrypted
    /// by Bob in order; the bytes rows (`checkpointAfterBatch`) end every batch with a
    /// `wal_checkpoint(TRUNCATE)`. The output: one message decrypted, after checking that the
    /// file holds the record in use.
    func decryptProbe(checkpointAfterBatch: Bool) -> Probe {
        Probe(
            workload: Workload(
                prepare: { n in try self.prepareIncoming(n) },
                run: { _ in
                    try self.decryptPending()
                    if checkpointAfterBatch { try self.bob.checkpoint() }
                }),
            output: {
                try self.prepareIncoming(1)
                try self.decryptPending()
                if checkpointAfterBatch { try self.bob.checkpoint() }
                try self.checkPersisted()
                return self.plaintext
            })
    }

    /// `store.sqlite.encrypt`: Bob encrypts to Alice. The output: one message encrypted by Bob
    /// and decrypted by Alice, after checking that the file holds Bob's record in use.
    /// With `checkpointAfterBatch` (the bytes rows), every batch ends with a
    /// `wal_checkpoint(TRUNCATE)`.
    func encryptProbe(checkpointAfterBatch: Bool = false) -> Probe {
        Probe(
            workload: Workload { n in
                try self.encryptOutgoing(n)
                if checkpointAfterBatch { try self.bob.checkpoint() }
            },
            output: {
                let (bob, alice, aliceAddress, plaintext) = (self.bob, self.alice, self.aliceAddress, self.plaintext)
                let received = try runBlocking { () async throws -> [UInt8] in
                    let wire = try await bob.encrypt(plaintext, to: aliceAddress)
                    return try await alice.decrypt(wire, from: bob.address).plaintext
                }
                try self.checkPersisted()
                return received
            })
    }
}

extension StoreConversation where Device == LibrarySQLiteDevice {
    /// `store.sqlite.first-message-after-open.*`: for each message, a new `SQLiteProtocolStore`
    /// on Bob's file (nothing cached) and a new manager over it, opened before the batch
    /// (untimed), decrypt one message from Alice. The output: the last plaintext.
    func reopenDecryptProbe() -> Probe {
        let opened = OpenedStores()
        return Probe(
            workload: Workload(
                prepare: { n in
                    opened.closeAll()
                    try self.prepareIncoming(n)
                    for _ in 0..<n { opened.stores.append(try self.bob.openedAgain()) }
                },
                run: { _ in try self.decryptPending(in: opened) }),
            output: {
                opened.closeAll()
                try self.prepareIncoming(1)
                opened.stores.append(try self.bob.openedAgain())
                try self.decryptPending(in: opened)
                opened.closeAll()
                return self.plaintext
            })
    }

    /// Decrypts the prepared messages, each in the next store opened for it.
    private func decryptPending(in opened: OpenedStores) throws {
        let (messages, alice, plaintext) = (pending, aliceAddress, plaintext)
        pending = []
        let managers = opened.stores.map(\.1)
        try CheckFailure.expect(managers.count == messages.count, "store.sqlite: one opened store per message")
        try runBlocking { () async throws -> Void in
            for (message, manager) in zip(messages, managers) {
                guard try await manager.decrypt(message, from: alice).plaintext == plaintext else {
                    throw CheckFailure("store.sqlite: a message decrypted to other bytes")
                }
            }
        }
    }
}

/// The stores a `reopenDecryptProbe` batch opened before it ran, closed before the next.
private final class OpenedStores: @unchecked Sendable {
    var stores: [(SQLiteProtocolStore, SessionManager)] = []

    func closeAll() {
        for (store, _) in stores { try? store.close() }
        stores = []
    }
}
