/// The errors of `SessionKitSQLite`'s own API: opening a store, the message archive and the
/// storage-key helpers.
///
/// The SessionKit and Verification protocol methods the store implements throw their own error
/// types instead; a failure of this module reaches them as `SessionError.storage` or
/// `VerificationError.storage`, whose message is this error's `description`.
///
/// `description` names paths, tables and SQLite's messages but never a key, a plaintext, a
/// user id or any other value the store seals or hashes.
public enum SQLiteStoreError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The storage key is not the one the file was created with (its sealed key check does not
    /// open). Also reported when that one check value was damaged: the two cannot be told apart.
    /// Nothing was changed.
    case wrongStorageKey
    /// A storage key that is not exactly 32 bytes.
    case invalidStorageKeyLength(Int)
    /// A sealed value in `table` does not open: it was changed on disk, copied from another row
    /// or table, or written by another file. Other rows stay readable.
    case damagedValue(table: String)
    /// The file was written by a newer version of this library (schema `found`); this version
    /// reads schemas up to `supported`. Nothing was changed.
    case newerSchema(found: Int, supported: Int)
    /// The file at `path` is an SQLite database, but not a store of this library (it holds other
    /// tables and not this library's application id). Nothing was changed.
    case notAStore(path: String)
    /// The file at `path` is not an SQLite database (or is encrypted by other means).
    case notADatabase(path: String)
    /// The file at `path` cannot be opened or created (`reason` says why: a missing folder,
    /// permissions, a missing file when creating was not allowed).
    case cannotOpen(path: String, reason: String)
    /// The store holds another identity than the one passed to open it. Nothing was changed.
    case identityMismatch
    /// A storage-key file cannot be used (see `KeyFileProblem`).
    case keyFile(path: String, problem: KeyFileProblem)
    /// An argument out of range (for example a page limit below 1 or an empty conversation id).
    case invalidArgument(String)
    /// A stored value opened but does not decode as the type it holds (written by a broken
    /// writer); `table` names where.
    case invalidValue(table: String)
    /// SQLite or GRDB failed (`message` is SQLite's message and result code, never a value).
    case database(String)

    /// A short description without secrets.
    public var description: String {
        switch self {
        case .wrongStorageKey: return "wrong storage key: the file was created with another key"
        case let .invalidStorageKeyLength(count): return "storage key of \(count) bytes (32 required)"
        case let .damagedValue(table): return "damaged value in table \(table): it does not open under this store's key"
        case let .newerSchema(found, supported):
            return "the file has schema version \(found), newer than this library supports (\(supported))"
        case let .notAStore(path): return "\(path) is an SQLite database but not a SessionKitSQLite store"
        case let .notADatabase(path): return "\(path) is not an SQLite database"
        case let .cannotOpen(path, reason): return "cannot open \(path): \(reason)"
        case .identityMismatch: return "the store holds another identity than the one given"
        case let .keyFile(path, problem): return "storage key file \(path): \(problem)"
        case let .invalidArgument(why): return "invalid argument: \(why)"
        case let .invalidValue(table): return "a value in table \(table) opens but does not decode"
        case let .database(message): return "database error: \(message)"
        }
    }
}
