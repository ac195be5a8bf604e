import SessionKit
import SessionKitAge

/// The errors of account export and restore (`SQLiteProtocolStore.exportAccount` and
/// `SQLiteProtocolStore.restoreAccount`). After any of them, restore has written nothing (no
/// store file exists at the target) and export has left no new file at its destinations
/// (except when renaming a second destination fails after the first was renamed).
///
/// `description` never shows a key, a passphrase, a user id or a message.
public enum AccountExportError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// No identity opens the export: a wrong recovery code or passphrase, or an export for
    /// another recipient (age "no match").
    case wrongKey
    /// The file is damaged or is not an age file (its header, header MAC, payload or armor
    /// fails: `reason` says which), or its plaintext does not start with an export header.
    case damaged(String)
    /// The header's `format` is not `sessionkit-export` (the value, at most 64 characters).
    case unknownFormat(String)
    /// The header's `version` is higher than this library reads (SPEC §10: refused).
    case unsupportedVersion(Int)
    /// The export has no usable identity as its first item (`reason` says why): nothing can be
    /// restored without it.
    case identity(String)
    /// Something exists at the restore target (the store file or its `-wal`/`-shm` files):
    /// restore only creates a new store.
    case targetExists(path: String)
    /// An argument cannot be used: no destination, an scrypt work factor below 2^16, a user id
    /// that is not 1 to 255 UTF-8 bytes, an empty conversation id.
    case invalidArgument(String)
    /// A file could not be read, written or renamed (the path and the system's reason).
    case file(String)
    /// The store failed (reading the account to export, or writing the restored one).
    case store(SQLiteStoreError)
    /// age failed for another reason than the file (a recipient that cannot be used, scrypt's
    /// memory unavailable).
    case age(AgeError)

    /// A short description without secrets.
    public var description: String {
        switch self {
        case .wrongKey: return "wrong recovery code or passphrase: no identity opens the export"
        case let .damaged(why): return "damaged export: \(why)"
        case let .unknownFormat(format): return "not a SessionKit export (format \(format))"
        case let .unsupportedVersion(version): return "export version \(version) is newer than this library reads (1)"
        case let .identity(why): return "the export has no usable identity: \(why)"
        case let .targetExists(path): return "\(path) already exists (restore creates a new store only)"
        case let .invalidArgument(why): return "invalid argument: \(why)"
        case let .file(why): return "file error: \(why)"
        case let .store(error): return "store error: \(error)"
        case let .age(error): return "age error: \(error)"
        }
    }

    /// The error for an age failure while reading an export.
    static func reading(_ error: AgeError) -> AccountExportError {
        switch error {
        case .noMatch: return .wrongKey
        case .header, .headerMAC, .payload, .armor: return .damaged(error.description)
        case let .file(why): return .file(why)
        default: return .age(error)
        }
    }

    /// The error for a plaintext that is not an export.
    static func reading(_ error: ExportFormatError) -> AccountExportError {
        switch error {
        case let .badHeader(why): return .damaged(why)
        case let .unknownFormat(format): return .unknownFormat(format)
        case let .unsupportedVersion(version): return .unsupportedVersion(version)
        }
    }
}
