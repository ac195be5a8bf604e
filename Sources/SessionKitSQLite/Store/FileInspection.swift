#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GRDBSQLite

/// What a read-only look at a file finds, before anything may write to it: the checks that can
/// refuse a file (not a database, another application's database, a newer schema, another
/// storage key, another identity) run on it, so that a refused open changes no byte of the
/// file, its WAL or its shared-memory file, and creates neither.
///
/// GRDB's `DatabasePool` writes before the store's first transaction (it turns WAL on and
/// commits a probe transaction when the WAL is empty) and checkpoints the WAL when its last
/// connection closes, so the file is read here with SQLite's C API instead, on one connection
/// opened `SQLITE_OPEN_READONLY` (which never checkpoints):
///
/// - Without a WAL (a file closed cleanly, or never opened by the pool), with the URI parameter
///   `immutable=1`: SQLite then reads the database file alone, without creating a WAL or a
///   `-shm` file (a read-only connection otherwise creates both, empty). The file's identity,
///   size and times are compared before and after: when another process changed it meanwhile
///   (it opened and checkpointed it), it is read again as below.
/// - With a WAL, with `readonly_shm=1`: SQLite reads the WAL too but does not write to the
///   `-shm` file (with no other process on the file it reads the WAL into private memory).
///   Only when the WAL has no `-shm` file beside it is the file opened without that parameter,
///   which creates the `-shm` file (the database file and the WAL still do not change).
struct FileInspection {
    /// `PRAGMA application_id`.
    var applicationID: Int32 = 0
    /// `PRAGMA user_version`.
    var version = 0
    /// How many objects (tables, indexes) `sqlite_master` lists.
    var objectCount = 0
    /// `meta.fileSalt`, when the file has one.
    var fileSalt: [UInt8]?
    /// `meta.keyCheck`, when the file has one.
    var keyCheck: [UInt8]?
    /// The sealed identity, when the file has one.
    var sealedIdentity: [UInt8]?

    /// Reads the file at `path` (which exists) without writing to it.
    /// - Throws: `SQLiteStoreError.notADatabase` for a file that is not an SQLite database,
    ///   `.cannotOpen` when it cannot be opened, `.damagedValue(table: "meta")` /
    ///   `.damagedValue(table: "identity")` for a stored value that is not a BLOB, `.database`
    ///   for another SQLite failure. Does not judge what it read (see `Schema.validate`).
    static func read(_ path: String, busyTimeout: Double) throws(SQLiteStoreError) -> FileInspection {
        if !exists(path + "-wal"), let before = FileState(path) {
            let result: Result<FileInspection, SQLiteStoreError>
            do { result = .success(try read(path, busyTimeout: busyTimeout, mode: "immutable=1")) } catch { result = .failure(error) }
            if !exists(path + "-wal"), FileState(path) == before { return try result.get() }
        }
        do {
            return try read(path, busyTimeout: busyTimeout, mode: "readonly_shm=1")
        } catch let failure {
            // SQLite cannot open a missing -shm file read-only: only then, let it create one.
            guard case .cannotOpen = failure, exists(path + "-wal"), !exists(path + "-shm") else { throw failure }
            return try read(path, busyTimeout: busyTimeout, mode: nil)
        }
    }

    /// Reads the file on a read-only connection opened with the URI parameter `mode`.
    private static func read(_ path: String, busyTimeout: Double, mode: String?) throws(SQLiteStoreError) -> FileInspection {
        let connection = try Connection(path: path, parameter: mode, busyTimeout: busyTimeout)
        defer { connection.close() }
        var inspection = FileInspection()
        inspection.applicationID = Int32(truncatingIfNeeded: try connection.integer("PRAGMA application_id") ?? 0)
        inspection.version = Int(clamping: try connection.integer("PRAGMA user_version") ?? 0)
        inspection.objectCount = Int(clamping: try connection.integer("SELECT count(*) FROM sqlite_master") ?? 0)
        guard inspection.applicationID == Schema.applicationID, inspection.version >= 1 else { return inspection }
        inspection.fileSalt = try connection.blob("SELECT value FROM meta WHERE name = 'fileSalt'", table: .meta)
        inspection.keyCheck = try connection.blob("SELECT value FROM meta WHERE name = 'keyCheck'", table: .meta)
        inspection.sealedIdentity = try connection.blob("SELECT sealed FROM identity WHERE id = 1", table: .identity)
        return inspection
    }

    private static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// What tells whether a file changed: its device and inode, size, and modification and
    /// status-change times (nanoseconds).
    private struct FileState: Equatable {
        let device: UInt64, inode: UInt64, size: Int64
        let modified: [Int], changed: [Int]

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(truncatingIfNeeded: info.st_dev)
            inode = UInt64(truncatingIfNeeded: info.st_ino)
            size = Int64(info.st_size)
            #if canImport(Darwin)
            modified = [info.st_mtimespec.tv_sec, info.st_mtimespec.tv_nsec].map { Int($0) }
            changed = [info.st_ctimespec.tv_sec, info.st_ctimespec.tv_nsec].map { Int($0) }
            #else
            modified = [info.st_mtim.tv_sec, info.st_mtim.tv_nsec].map { Int($0) }
            changed = [info.st_ctim.tv_sec, info.st_ctim.tv_nsec].map { Int($0) }
            #endif
        }
    }

    /// One read-only SQLite connection (C API).
    private final class Connection {
        let path: String
        private var handle: OpaquePointer?

        init(path: String, parameter: String?, busyTimeout: Double) throws(SQLiteStoreError) {
            self.path = path
            let uri = Self.uri(path) + (parameter.map { "?" + $0 } ?? "")
            let code = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
            guard code == SQLITE_OK, handle != nil else {
                let failure = error(code)
                close()
                throw failure
            }
            sqlite3_extended_result_codes(handle, 1)
            let milliseconds = busyTimeout.isNaN ? 0 : min(max(busyTimeout * 1000, 0), Double(Int32.max))
            sqlite3_busy_timeout(handle, Int32(milliseconds))
        }

        func close() {
            if let handle { sqlite3_close_v2(handle) }
            handle = nil
        }

        /// The first column of the first row of `sql` as an integer (`nil`: no row, or NULL).
        func integer(_ sql: String) throws(SQLiteStoreError) -> Int64? {
            let value: Int64?? = try firstValue(sql) { statement -> Int64? in
                sqlite3_column_type(statement, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, 0)
            }
            return value ?? nil
        }

        /// The first column of the first row of `sql` as bytes (`nil`: no row).
        /// - Throws: `SQLiteStoreError.damagedValue(table:)` when the value is not a BLOB.
        func blob(_ sql: String, table: SealedTable) throws(SQLiteStoreError) -> [UInt8]? {
            let value: [UInt8]?? = try firstValue(sql) { statement in
                guard sqlite3_column_type(statement, 0) == SQLITE_BLOB else { return nil }
                let count = Int(sqlite3_column_bytes(statement, 0))
                guard count > 0, let bytes = sqlite3_column_blob(statement, 0) else { return [] }
                return Array(UnsafeRawBufferPointer(start: bytes, count: count))
            }
            switch value {
            case .none: return nil
            case .some(.none): throw .damagedValue(table: table.name)
            case let .some(.some(bytes)): return bytes
            }
        }

        /// Runs `sql` and reads its first row with `read` (`nil`: no row).
        private func firstValue<T>(_ sql: String, _ read: (OpaquePointer) -> T) throws(SQLiteStoreError) -> T? {
            var statement: OpaquePointer?
            var code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
            guard code == SQLITE_OK, let statement else { throw error(code) }
            defer { sqlite3_finalize(statement) }
            code = sqlite3_step(statement)
            switch code {
            case SQLITE_ROW: return read(statement)
            case SQLITE_DONE: return nil
            default: throw error(code)
            }
        }

        /// The store's error for an SQLite result code (extended codes reduced to their
        /// primary code), with SQLite's message.
        private func error(_ code: Int32) -> SQLiteStoreError {
            let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "SQLite result code \(code)"
            switch code & 0xff {
            case SQLITE_NOTADB: return .notADatabase(path: path)
            case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY: return .cannotOpen(path: path, reason: message)
            default: return .database("SQLite error \(code): \(message)")
            }
        }

        /// `path` as an SQLite URI: `file:` and the path with every byte outside
        /// `A-Z a-z 0-9 - . _ ~ /` percent-encoded (an absolute path gets an empty authority).
        static func uri(_ path: String) -> String {
            let hex = Array("0123456789ABCDEF".utf8)
            var encoded: [UInt8] = []
            for byte in path.utf8 {
                switch byte {
                case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "0") ... UInt8(ascii: "9"),
                     UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                    encoded.append(byte)
                default:
                    encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0f)]]
                }
            }
            return (path.hasPrefix("/") ? "file://" : "file:") + String(decoding: encoded, as: UTF8.self)
        }
    }
}
