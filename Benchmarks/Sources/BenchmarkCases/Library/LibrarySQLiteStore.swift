import BenchmarkHarness
import GRDB
@_spi(Testing) import SessionKit
@_spi(Testing) import SessionKitSQLite
import SignalPrimitives

/// The library's side of the `store.sqlite.*` cases: Bob's `SessionManager` over a
/// `SQLiteProtocolStore` that is also its trust store (`SessionManager(store: store, trust:
/// store, localAddress:)`), in a new file (1 KiB pages, WAL) in a temporary folder, opened with
/// `SQLiteStoreOptions(durability: .processCrash)` (`synchronous = NORMAL`). Each call
/// commits its writes (the session's parts that changed) in one transaction before it returns.
final class LibrarySQLiteDevice: PersistingDevice {
    /// Bob's address.
    let address: ProtocolAddress
    /// Bob's manager.
    let manager: SessionManager
    /// The store (also the trust store).
    let store: SQLiteProtocolStore
    /// The durability the store was opened with.
    let durability: SQLiteStoreOptions.Durability
    /// The storage key, to read the file anew in the check.
    private let storageKey: StorageKey
    /// A second connection to the file, for `checkpoint()` (the store has no checkpoint call;
    /// a checkpoint can be run from any connection).
    private let checkpointer: DatabaseQueue
    /// The folder of the file, removed after the store closes.
    private let folder: TemporaryFolder

    /// A new store in a new temporary folder, `.processCrash` durability.
    convenience init(address: ProtocolAddress) throws { try self.init(address: address, durability: .processCrash) }

    /// A new store in a new temporary folder with `durability`; with `sendLog`, the manager
    /// keeps its send log in the store (SPEC §9: every message sent also writes its entry).
    init(address: ProtocolAddress, durability: SQLiteStoreOptions.Durability, sendLog: Bool = false) throws {
        self.address = address
        folder = try TemporaryFolder()
        let path = folder.path("bob.sqlite")
        storageKey = StorageKey.generate()
        self.durability = durability
        store = try SQLiteProtocolStore(path: path, storageKey: storageKey, options: SQLiteStoreOptions(durability: durability))
        manager = SessionManager(store: store, trust: store, localAddress: address, sendLog: sendLog ? store : nil)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        checkpointer = try DatabaseQueue(path: path, configuration: configuration)
    }

    deinit {
        try? checkpointer.close()
        try? store.close()
    }

    func encrypt(_ plaintext: [UInt8], to peer: ProtocolAddress) async throws -> [UInt8] {
        try await manager.encrypt(plaintext, to: peer)
    }

    func decrypt(_ message: [UInt8], from peer: ProtocolAddress) async throws -> [UInt8] {
        try await manager.decrypt(message, from: peer).plaintext
    }

    /// A second store on Bob's file (opened now, nothing cached) and a manager over it.
    func openedAgain() throws -> (SQLiteProtocolStore, SessionManager) {
        let reopened = try SQLiteProtocolStore(
            path: store.path, storageKey: storageKey, options: SQLiteStoreOptions(createIfMissing: false, durability: durability))
        return (reopened, SessionManager(store: reopened, trust: reopened, localAddress: address))
    }

    func checkpoint() throws {
        try checkpointer.writeWithoutTransaction { db in try WALCheckpoint.truncate(db) }
    }

    func recordBytes(of peer: ProtocolAddress) async throws -> (live: [UInt8], persisted: [UInt8]) {
        guard let live = try await store.loadSession(for: peer) else { throw CheckFailure("store.sqlite: Bob has no session") }
        // A second store on the same file reads the record from the file (no cache).
        let reader = try SQLiteProtocolStore(
            path: store.path, storageKey: storageKey, options: SQLiteStoreOptions(createIfMissing: false, durability: .processCrash))
        defer { try? reader.close() }
        guard let persisted = try await reader.loadSession(for: peer) else {
            throw CheckFailure("store.sqlite: the file holds no session")
        }
        return (live.serialized(), persisted.serialized())
    }
}

/// The prekey-message rows: everything goes through the store (one transaction per message:
/// the session, the prekeys, the record's row).
extension LibrarySQLiteDevice: ReplayRecordDevice {
    func localIdentity() async throws -> IdentityKeyPair { try await store.localIdentity() }

    func loadPreKeys() async throws -> LocalPreKeys? { try await store.loadPreKeys() }

    func updatePreKeys(_ update: @escaping @Sendable (inout LocalPreKeys?) throws(SessionError) -> Void) async throws {
        try await store.updatePreKeys(update)
    }

    func addBaseKeyRecords(_ records: [BaseKeyRecord]) async throws { try await store.addBaseKeyRecords(records) }

    func decryptPreKeyMessage(_ message: [UInt8], from peer: ProtocolAddress) async throws -> [UInt8] {
        try await manager.decrypt(message, from: peer).plaintext
    }

    func persists(_ record: BaseKeyRecord) async throws -> Bool {
        // A second store on the same file reads the row from the file.
        let reader = try SQLiteProtocolStore(
            path: store.path, storageKey: storageKey, options: SQLiteStoreOptions(createIfMissing: false, durability: .processCrash))
        defer { try? reader.close() }
        return try await reader.hasRecordedBaseKey(record.baseKey, signedPreKeyID: record.signedPreKeyID)
    }
}

/// `PRAGMA wal_checkpoint(TRUNCATE)`, checked.
enum WALCheckpoint {
    /// Runs a TRUNCATE checkpoint on `db`: every WAL frame is copied into the database file,
    /// which is synced, and the WAL is truncated to zero bytes. Throws when a reader or writer
    /// kept it from completing.
    static func truncate(_ db: Database) throws {
        guard let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") else {
            throw CheckFailure("wal_checkpoint returned no row")
        }
        let busy: Int = row[0]
        guard busy == 0 else { throw CheckFailure("wal_checkpoint(TRUNCATE) could not complete (busy)") }
    }
}
