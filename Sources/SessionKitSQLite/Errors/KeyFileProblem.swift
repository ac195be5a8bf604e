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
    /// The file does not hold exactly 32 bytes (`found` bytes).
    case wrongLength(found: Int)
    /// A system call failed with `errno`.
    case systemError(errno: Int32)

    /// A short description (never the key).
    public var description: String {
        switch self {
        case .missing: return "no such file"
        case .alreadyExists: return "a file already exists there (it is never overwritten)"
        case .notARegularFile: return "not a regular file (a symbolic link, a folder or a device)"
        case let .permissionsTooOpen(mode):
            return "permissions 0\(String(mode & 0o777, radix: 8)) let the group or others access it (0600 required)"
        case let .wrongLength(found): return "holds \(found) bytes (32 required)"
        case let .systemError(code): return "system error \(code) (\(String(cString: strerror(code))))"
        }
    }
}
