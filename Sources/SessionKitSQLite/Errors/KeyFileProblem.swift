#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a storage-key file cannot be used (`SQLiteStoreError.keyFile`).
public enum KeyFileProblem: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// No file at the path.
    case missing
    /// Creating it failed because a file is already there (it is never overwritten).
    case alreadyExists
    /// The path is a symbolic link, a folder or another non-regular file.
    case notARegularFile
    /// The file is readable or writable by its group or by others (`mode` holds its permission
    /// bits); only the owner may have access (0600 or 0400). Fix with `chmod 600` after checking
    /// that nobody else read it, or make a new key.
    case permissionsTooOpen(mode: UInt32)
    /// The file belongs to another user (`uid`) than the one the process runs as (its
    /// effective user id): that user could have written the key, or could read it.
    case ownedByAnotherUser(uid: UInt32)
    /// The folder holding the file can be written by its group or by others, even with the
    /// sticky bit (`mode` holds its permission bits): they could put another key file in its
    /// place. Fix with `chmod go-w` on the folder, or keep the key in a private folder.
    case folderWritableByOthers(mode: UInt32)
    /// The folder holding the file belongs to another user (`uid`) than the process's
    /// effective user and than root: that user could put another key file in its place.
    case folderOwnedByAnotherUser(uid: UInt32)
    /// The file does not hold exactly 32 bytes (`found` bytes).
    case wrongLength(found: Int)
    /// The file has the length of a version-2 key file (key and store epoch) but not its magic
    /// and version, or an epoch that does not decode.
    case unrecognizedFormat
    /// A system call failed with `errno`.
    case systemError(errno: Int32)
    /// A passphrase key file does not open with the passphrase given (age "no match").
    case wrongPassphrase
    /// A passphrase key file is not an age file with one `scrypt` stanza holding a 32-byte key,
    /// or is damaged (`reason` says which part; never the key).
    case notAPassphraseKeyFile(reason: String)

    /// A short description (never the key).
    public var description: String {
        switch self {
        case .missing: return "no such file"
        case .alreadyExists: return "a file already exists there (it is never overwritten)"
        case .notARegularFile: return "not a regular file (a symbolic link, a folder or a device)"
        case let .permissionsTooOpen(mode):
            return "permissions 0\(String(mode & 0o777, radix: 8)) let the group or others access it (0600 required)"
        case let .ownedByAnotherUser(uid): return "belongs to user \(uid), not to this process's user"
        case let .folderWritableByOthers(mode):
            return "its folder's permissions 0\(String(mode & 0o7777, radix: 8)) let the group or others write there (go-w required)"
        case let .folderOwnedByAnotherUser(uid): return "its folder belongs to user \(uid), neither this process's user nor root"
        case let .wrongLength(found): return "holds \(found) bytes (32, or 61 for a key file with a store epoch, required)"
        case .unrecognizedFormat: return "not a version-2 key file (magic, version or epoch)"
        case let .systemError(code): return "system error \(code) (\(String(cString: strerror(code))))"
        case .wrongPassphrase: return "the passphrase does not open it"
        case let .notAPassphraseKeyFile(reason): return "not a passphrase key file: \(reason)"
        }
    }
}
