#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SignalPrimitives

/// A durable store for one device of an account: its identity and prekeys, its sessions (stored
/// in parts: the current session, each previous session and each skipped message key in a row
/// of its own), its sender-key chains, the trust records, and an encrypted message archive, in
/// one SQLite file (GRDB `DatabasePool`, WAL mode).
///
/// Every value that holds a secret or a message is sealed with XChaCha20-Poly1305 under a
/// subkey of the app's `StorageKey`, bound to its table and row (see `ValueSealer`); ids that
/// would tell who the user talks to (addresses, conversation and message ids) are stored as
/// keyed hashes. What the file shows without the key: its schema, row counts, value sizes,
/// archive timestamps (see `appendArchivedMessage`), and which rows change when.
///
/// Durability: WAL with `synchronous = FULL` by default (`SQLiteStoreOptions.durability`), so
/// a transaction that returned survives a power loss. (`NORMAL` would be consistent too but may
/// roll back the last transactions; for ratchet state that can mean sending twice under one
/// message key.) `secure_delete` is on, so deleted values are overwritten in the file; older
/// values can stay in the WAL until it is checkpointed and starts over (`journal_size_limit =
/// 0` then cuts off what lies beyond the new frames), and `close()` checkpoints and truncates
/// it. Another process may open the same file: writes wait up to
/// `SQLiteStoreOptions.busyTimeout` for its lock.
///
/// Restore detection. A file replaced by an older copy of itself (a restored backup) would send
/// again under message keys its sessions already used. With a `StoreEpochKeeper` (the key file,
/// or the Keychain), every open advances an epoch kept both in the file and beside the key, and
/// a file found behind is recovered in its opening transaction, before anything can send
/// (`restoredFromOlderCopy`, `StoreRestore`). Better still, keep the file out of backups
/// (`excludeFromBackup(path:)` on Apple platforms). See the article "Persistence".
///
/// Conformances: `ProtocolStore` with `IdentityKeyStore`, `PreKeyStore`, `SessionStore` and
/// `SenderKeyStore` (SessionKit), and `TrustStore` (Verification). Each method is one SQLite
/// transaction, so each is atomic, also across processes; `commit(_:)` writes everything one
/// `SessionManager` call changed, comparing and swapping every state's generation, and
/// `updatePreKeys` runs its closure inside the write transaction.
///
/// Use one instance per file in a process (it is `Sendable`; share it). `close()` releases the
/// file; an instance that is released closes it too.
public final class SQLiteProtocolStore: Sendable {
    /// The path of the database file.
    public let path: String
    /// The schema version of the file (always `currentSchemaVersion` once opened).
    public static var currentSchemaVersion: Int { Schema.currentVersion }

    /// The connections.
    let pool: DatabasePool
    /// The session records' parts as last read or written (`SessionPartsCache`).
    let sessionCache = SessionPartsCache()
    /// The prekeys as last read or written (`PreKeysCache`).
    let preKeysCache = PreKeysCache()
    /// The trust records of the last trust decisions (`TrustRecordCache`).
    let trustCache = TrustRecordCache()
    /// Seals and opens values, hashes row keys (the file's subkeys).
    let sealer: ValueSealer
    /// This device's identity, read (or created) at open. It never changes.
    let identity: IdentityKeyPair
    /// This installation's registration id (SPEC §9), read (or drawn) at open. It changes only
    /// at an open that finds the file restored from an older copy.
    let registrationID: RegistrationID
    /// What this open found and did when the file was an older copy of itself (a restored
    /// backup: its epoch behind the one the `StoreEpochKeeper` keeps), or `nil` when it was not
    /// (or no keeper was given, or the keeper held no epoch of this file). Act on it: see
    /// `StoreRestore`. Reported by the open that detected it only.
    public let restoredFromOlderCopy: StoreRestore?
    /// The file's epoch after this open (`StoreEpoch`): one more than the greater of the file's
    /// and the kept one. (`advanceEpoch()` moves it on later without changing this value.)
    public let epoch: StoreEpoch
    /// Where the epoch is kept beside the storage key, if anywhere.
    let epochKeeper: (any StoreEpochKeeper)?
    /// Whether `close()` completed.
    private let closing = CloseOnce()

    /// The row key of single-row tables (`identity`, `prekeys`): their id, 1, as a u32.
    static let singleRowKey: [UInt8] = [0, 0, 0, 1]
    /// The plaintext of the key check (`meta.keyCheck`).
    static let keyCheckPlaintext = Array("SessionKitSQLite storage key check".utf8)

    /// Opens the store at `path`, creating the file (mode 0600) and its identity when there is
    /// none, and, with an `epochKeeper`, detects a file restored from an older copy of itself.
    ///
    /// Restore detection. The epoch kept beside the storage key is read first, then the opening
    /// transaction reads the file's epoch: when the keeper holds an epoch of this file
    /// (`StoreEpoch.fileID`) that the file's is below, the file is an older copy, and the same
    /// transaction archives every session, drops the sending chains, prepares the prekeys for
    /// rotation and draws a new registration id (`restoredFromOlderCopy`). Every open then
    /// writes the next epoch, max(file, kept) + 1, into the file in that transaction, and only
    /// after it committed hands it to the keeper. In this order a crash between the two writes
    /// leaves the file ahead of the keeper, which is not a restore (no false alarm), and the next
    /// open writes both again; the reverse order would leave the keeper ahead of a file that was
    /// never restored. Nor can a crash lose a detection: the detection, the recovery and the new
    /// file epoch commit together, so a recovered file is never found behind again, and one that
    /// was not recovered still is. A file is only caught by an open after the copy was taken:
    /// one copied while open and put back before the app opened the store again is not (see
    /// `advanceEpoch()`).
    ///
    /// On first open the store holds `identity`, or a new identity when `identity` is `nil`, and
    /// draws the installation's registration id (SPEC §9; a store created for a restored
    /// identity draws its own). Later opens read the stored identity and id; passing an
    /// identity then checks it is the same. An older file is migrated (in one transaction)
    /// before anything else, and a file from before registration ids draws its id in that
    /// transaction. A file that is
    /// refused (another storage key, another identity, a newer schema, not a store, not a
    /// database) is read without writing first, so the refusal leaves it, its WAL and its
    /// `-shm` file byte for byte as they were.
    /// - Throws: `SQLiteStoreError.wrongStorageKey` when the file was created with another key,
    ///   `.identityMismatch` when `identity` is not the stored one, `.newerSchema` for a file from
    ///   a newer library, `.notADatabase` / `.notAStore` / `.cannotOpen` (with the path) for a file
    ///   that is not a store or cannot be opened, `.damagedValue(table: "identity")` when the
    ///   stored identity does not open (`"registration"`: the registration id; `"store_epoch"`:
    ///   the epoch), `.database` when SQLite fails, and the errors of `epochKeeper` (when its
    ///   write fails, the file's epoch has advanced already: opening again writes it again).
    public init(
        path: String, storageKey: StorageKey, identity: IdentityKeyPair? = nil,
        epochKeeper: (any StoreEpochKeeper)? = nil, options: SQLiteStoreOptions = SQLiteStoreOptions()
    ) throws(SQLiteStoreError) {
        self.path = path
        self.epochKeeper = epochKeeper
        // SQLite takes milliseconds in an Int32 (GRDB converts without clamping).
        let busyTimeout = options.busyTimeout.isNaN ? 0 : min(max(options.busyTimeout, 0), Double(Int32.max) / 1000)
        try Self.prepareFile(at: path, create: options.createIfMissing)
        try Self.inspect(path, storageKey: storageKey, identity: identity, busyTimeout: busyTimeout)
        // The kept epoch before the file's (see above).
        let kept = try epochKeeper?.readEpoch()
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.maximumReaderCount = max(1, options.maximumReaderCount)
        configuration.label = "SessionKitSQLite"
        configuration.prepareDatabase { db in
            // Small pages for a new file (no effect on an existing one): persisting a message
            // rewrites one small row, and the WAL receives whole pages.
            try db.execute(sql: "PRAGMA page_size = 1024")
            try db.execute(sql: "PRAGMA synchronous = \(options.durability.pragmaValue)")
            try db.execute(sql: "PRAGMA secure_delete = ON")
            // When the WAL starts over after a checkpoint, cut off the frames beyond the new
            // ones instead of keeping the file at its largest size with older values in it.
            try db.execute(sql: "PRAGMA journal_size_limit = 0")
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw Self.openingError(error, path: path)
        }
        let opened: Opened
        do {
            opened = try pool.writeWithoutTransaction { db in
                // GRDB turns WAL on after prepareDatabase and sets `synchronous = NORMAL` on the
                // writer then: set what the options ask for again, before the first commit.
                try db.execute(sql: "PRAGMA synchronous = \(options.durability.pragmaValue)")
                var result: Opened?
                try db.inTransaction(.immediate) {
                    let found = try Schema.migrate(db, path: path)
                    let (sealer, salt) = try Self.openKeys(db, storageKey: storageKey)
                    try Schema.migrateValues(db, from: found, sealer: sealer)
                    let storedIdentity = try Self.openIdentity(db, sealer: sealer, given: identity)
                    var registrationID = try Self.openRegistrationID(db, sealer: sealer)
                    let fileID = Self.epochFileID(salt: salt, sealer: sealer)
                    let fileEpoch = try Self.readFileEpoch(db, sealer: sealer)
                    let keptValue = kept.flatMap { $0.fileID == fileID ? $0.value : nil }
                    var restore: StoreRestore?
                    if let keptValue, fileEpoch ?? 0 < keptValue {
                        let recovery = try Self.recoverFromOlderCopy(db, sealer: sealer, registrationID: registrationID)
                        restore = StoreRestore(
                            fileEpoch: fileEpoch, keptEpoch: keptValue, archivedSessionCount: recovery.archived,
                            droppedSendingChainCount: recovery.droppedChains, previousRegistrationID: registrationID,
                            registrationID: recovery.registrationID)
                        registrationID = recovery.registrationID
                    }
                    let (next, overflow) = max(fileEpoch ?? 0, keptValue ?? 0).addingReportingOverflow(1)
                    let epoch = try StoreEpoch(fileID: fileID, value: overflow ? .max : next)
                    try Self.writeFileEpoch(epoch.value, db: db, sealer: sealer)
                    result = Opened(sealer: sealer, identity: storedIdentity, registrationID: registrationID, restore: restore, epoch: epoch)
                    return .commit
                }
                guard let result else { throw SQLiteStoreError.database("opening transaction returned nothing") }
                return result
            }
            // Only once the file's epoch is committed (see above).
            try epochKeeper?.writeEpoch(opened.epoch)
        } catch {
            try? pool.close()
            throw Self.openingError(error, path: path)
        }
        self.pool = pool
        sealer = opened.sealer
        self.identity = opened.identity
        registrationID = opened.registrationID
        restoredFromOlderCopy = opened.restore
        epoch = opened.epoch
    }

    /// What the opening transaction read or set.
    private struct Opened: Sendable {
        let sealer: ValueSealer
        let identity: IdentityKeyPair
        let registrationID: RegistrationID
        let restore: StoreRestore?
        let epoch: StoreEpoch
    }

    /// Closes the file's connections, leaving every committed transaction in the database file
    /// itself: the WAL is checkpointed and truncated to zero bytes, and when no other process
    /// has the file open the `-wal` and `-shm` files are removed, so the file alone is a
    /// complete copy. Later calls on the store fail with a database error; closing again does
    /// nothing.
    ///
    /// When another process still has the file open and is reading or writing, what it uses
    /// stays in the WAL (after waiting up to `SQLiteStoreOptions.busyTimeout`); that process
    /// checkpoints it when it closes. Do not call it while another call on the store runs.
    /// - Throws: `SQLiteStoreError.database` when a connection cannot close (a statement is
    ///   still running) or the checkpoint fails; the store then stays open.
    public func close() throws(SQLiteStoreError) {
        try closing.closeOnce { () throws(SQLiteStoreError) in
            do {
                // The readers first: they are read-only, so the last of them to close could not
                // checkpoint. Then the writer, the last connection, moves the WAL into the file.
                pool.releaseMemory()
                try pool.writeWithoutTransaction { db in try Self.checkpointAndTruncate(db) }
                try pool.close()
            } catch {
                throw Self.storeError(error)
            }
        }
    }

    /// Copies every frame of the WAL into the database file and truncates the WAL to zero
    /// bytes. Another process reading or writing (busy) is not an error: what it uses stays in
    /// the WAL until it checkpoints.
    static func checkpointAndTruncate(_ db: Database) throws {
        do {
            try db.checkpoint(.truncate)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            return
        }
    }

    // MARK: Opening

    /// Creates a missing file with mode 0600 (SQLite would use 0644; its `-wal` and `-shm`
    /// files take the database file's mode), or checks that it exists.
    private static func prepareFile(at path: String, create: Bool) throws(SQLiteStoreError) {
        if access(path, F_OK) == 0 { return }
        guard create else { throw .cannotOpen(path: path, reason: "no such file") }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(0o600))
        if fd >= 0 {
            closeFileDescriptor(fd)
            return
        }
        let code = errno
        if code == EEXIST { return }
        throw .cannotOpen(path: path, reason: String(cString: strerror(code)))
    }

    /// Refuses, before the pool opens it (which writes to the file: see `FileInspection`), a
    /// file that is not a database, another application's database, a store from a newer
    /// schema, a store created with another storage key, or one holding another identity than
    /// `identity`: each refusal leaves every byte of the file, its WAL and its shared-memory
    /// file unchanged. The opening transaction checks again (another process may change the
    /// file in between).
    private static func inspect(
        _ path: String, storageKey: StorageKey, identity: IdentityKeyPair?, busyTimeout: Double
    ) throws(SQLiteStoreError) {
        let inspection = try FileInspection.read(path, busyTimeout: busyTimeout)
        _ = try Schema.validate(
            applicationID: inspection.applicationID, version: inspection.version, objectCount: inspection.objectCount, path: path)
        // A new file (or one whose first transaction is not there yet) has no key check.
        guard let salt = inspection.fileSalt, let check = inspection.keyCheck else { return }
        let sealer = try checkedSealer(storageKey: storageKey, salt: salt, keyCheck: check)
        if let identity, let sealed = inspection.sealedIdentity {
            guard try storedIdentity(sealed, sealer: sealer).publicKey == identity.publicKey else { throw .identityMismatch }
        }
    }

    /// Reads (or, in a new file, creates) the file salt and the key check, and returns the
    /// sealer of the file's subkeys.
    private static func openKeys(_ db: Database, storageKey: StorageKey) throws -> (ValueSealer, salt: [UInt8]) {
        if let salt = try metaValue(db, name: "fileSalt"), let check = try metaValue(db, name: "keyCheck") {
            return (try checkedSealer(storageKey: storageKey, salt: salt, keyCheck: check), salt)
        }
        let salt: [UInt8]
        if let stored = try metaValue(db, name: "fileSalt") {
            guard stored.count == StoreKeys.fileSaltByteCount else { throw SQLiteStoreError.damagedValue(table: SealedTable.meta.name) }
            salt = stored
        } else {
            salt = SecureRandom.bytes(StoreKeys.fileSaltByteCount)
            try db.execute(sql: "INSERT INTO meta (name, value) VALUES ('fileSalt', ?)", arguments: [Data(salt)])
        }
        let sealer = ValueSealer(keys: try StoreKeys(storageKey: storageKey, fileSalt: salt))
        let sealed = try sealer.seal(keyCheckPlaintext, table: .meta, rowKey: keyCheckRow)
        try db.execute(sql: "INSERT INTO meta (name, value) VALUES ('keyCheck', ?)", arguments: [Data(sealed)])
        return (sealer, salt)
    }

    /// The row key of the key check (`meta.keyCheck`).
    private static let keyCheckRow = Array("keyCheck".utf8)

    /// The sealer of a file with this salt and key check, after checking that the key check
    /// opens under `storageKey`.
    /// - Throws: `SQLiteStoreError.wrongStorageKey` when it does not, `.damagedValue(table:
    ///   "meta")` for a salt of the wrong length.
    private static func checkedSealer(storageKey: StorageKey, salt: [UInt8], keyCheck: [UInt8]) throws(SQLiteStoreError) -> ValueSealer {
        guard salt.count == StoreKeys.fileSaltByteCount else { throw .damagedValue(table: SealedTable.meta.name) }
        let sealer = ValueSealer(keys: try StoreKeys(storageKey: storageKey, fileSalt: salt))
        let opened: SecureBytes
        do { opened = try sealer.open(keyCheck, table: .meta, rowKey: keyCheckRow) } catch { throw .wrongStorageKey }
        guard opened.bytes == keyCheckPlaintext else { throw .wrongStorageKey }
        return sealer
    }

    private static func metaValue(_ db: Database, name: String) throws -> [UInt8]? {
        guard let value = try DatabaseValue.fetchOne(db, sql: "SELECT value FROM meta WHERE name = ?", arguments: [name]) else {
            return nil
        }
        return try blob(value, table: .meta)
    }

    /// Reads the stored identity (checking it against `given`), or stores `given` or a new one.
    private static func openIdentity(_ db: Database, sealer: ValueSealer, given: IdentityKeyPair?) throws -> IdentityKeyPair {
        if let value = try DatabaseValue.fetchOne(db, sql: "SELECT sealed FROM identity WHERE id = 1") {
            let stored = try storedIdentity(try blob(value, table: .identity), sealer: sealer)
            if let given, given.publicKey != stored.publicKey { throw SQLiteStoreError.identityMismatch }
            return stored
        }
        let identity: IdentityKeyPair
        if let given {
            identity = given
        } else {
            do { identity = try IdentityKeyPair() } catch { throw SQLiteStoreError.database("cannot generate an identity: \(error)") }
        }
        var bytes = identity.serialized()
        defer { SecureMemory.zero(&bytes) }
        let sealed = try sealer.seal(bytes, table: .identity, rowKey: singleRowKey)
        try db.execute(sql: "INSERT INTO identity (id, sealed) VALUES (1, ?)", arguments: [Data(sealed)])
        return identity
    }

    /// Reads the stored registration id, or draws one and stores it (a new file, or one that
    /// `SchemaRegistrationID` just migrated).
    /// - Throws: `SQLiteStoreError.damagedValue(table: "registration")` when the value does not
    ///   open, `.invalidValue(table: "registration")` when it is not an id in range.
    private static func openRegistrationID(_ db: Database, sealer: ValueSealer) throws -> RegistrationID {
        if let value = try DatabaseValue.fetchOne(db, sql: "SELECT sealed FROM registration WHERE id = 1") {
            let opened = try sealer.open(try blob(value, table: .registration), table: .registration, rowKey: singleRowKey).bytes
            guard opened.count == 4, let id = RegistrationID(rawValue: opened.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) else {
                throw SQLiteStoreError.invalidValue(table: SealedTable.registration.name)
            }
            return id
        }
        let id = RegistrationID.random()
        try writeRegistrationID(id, db: db, sealer: sealer)
        return id
    }

    /// The identity sealed in the `identity` row.
    /// - Throws: `SQLiteStoreError.damagedValue(table: "identity")` when it does not open,
    ///   `.invalidValue(table: "identity")` when it does not decode.
    private static func storedIdentity(_ sealed: [UInt8], sealer: ValueSealer) throws(SQLiteStoreError) -> IdentityKeyPair {
        let opened = try sealer.open(sealed, table: .identity, rowKey: singleRowKey)
        var bytes = opened.bytes
        defer { SecureMemory.zero(&bytes) }
        do { return try IdentityKeyPair(serialized: bytes) } catch { throw .invalidValue(table: SealedTable.identity.name) }
    }

    /// The bytes of a BLOB column; any other storage class means the row was tampered with.
    static func blob(_ value: DatabaseValue, table: SealedTable) throws(SQLiteStoreError) -> [UInt8] {
        guard case let .blob(data) = value.storage else { throw .damagedValue(table: table.name) }
        return [UInt8](data)
    }

    /// The error for a failure while opening, naming the path where SQLite could not open it.
    private static func openingError(_ error: any Error, path: String) -> SQLiteStoreError {
        if let error = error as? SQLiteStoreError { return error }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_NOTADB: return .notADatabase(path: path)
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY:
                return .cannotOpen(path: path, reason: error.message ?? "SQLite result code \(error.resultCode.rawValue)")
            default: break
            }
        }
        return storeError(error)
    }
}

/// Runs a store's closing once: after it succeeded, later calls do nothing.
private final class CloseOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var closed = false

    /// Runs `body` unless an earlier call succeeded; a failed `body` can be run again.
    func closeOnce(_ body: () throws(SQLiteStoreError) -> Void) throws(SQLiteStoreError) {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        try body()
        closed = true
    }
}

/// `close(2)`, out of reach of `SQLiteProtocolStore.close()`'s name.
private func closeFileDescriptor(_ fd: Int32) {
    _ = close(fd)
}
