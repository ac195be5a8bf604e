#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Storage) import SessionKit
import SignalPrimitives

/// Storage keys kept in a file readable only by its owner: the way to keep a `StorageKey` on
/// Linux (on Apple platforms, prefer the Keychain; see `StorageKey`).
///
/// A new file (version 1) holds exactly the 32 key bytes. Restore detection
/// (`KeyFileEpochKeeper`) upgrades it to version 2, which also holds the store's epoch
/// (`StoreEpoch`):
///
///     version 1 = key (32)
///     version 2 = "SKKF" || u8(2) || key (32) || fileID (16) || u64(epoch)     (61 bytes)
///
/// It is created with mode 0600, written, `fsync`ed and linked into place atomically (never
/// overwriting a file, never following a symbolic link; an epoch update writes a new file the
/// same way and renames it over the old one, so a crash leaves the old file or the new one,
/// never a mix); reading refuses a symbolic link, a non-regular file, a file of another user
/// than the process's effective user, a file its group or others may access, and a file of
/// any other length than 32 or 61 bytes, and one of 61 bytes without the version-2 magic. Both refuse a folder that its group or others can write to, or that belongs to
/// another user than the process's or root: whoever can write the folder can put another key
/// file in its place. The key is read straight into wiping storage.
///
/// The file protects the key only as far as the account and disk do: anyone who can read it as
/// its owner (or as root) can open the store. Keep it out of backups that leave the machine.
extension StorageKey {
    /// Creates a key file at `path` holding a new random key, and returns the key.
    ///
    /// The key is written to a temporary file in the same folder (`O_EXCL`, mode 0600), synced,
    /// and linked to `path` in one step, so no process ever sees a partial key file, and an
    /// existing file is never replaced.
    /// - Throws: `SQLiteStoreError.keyFile` with `.folderWritableByOthers` or
    ///   `.folderOwnedByAnotherUser` when the folder is not private to this user (nothing is
    ///   created), `.alreadyExists` when anything is at `path` (nothing is overwritten),
    ///   `.systemError` when it cannot be created or written (then no file is left behind).
    public static func createKeyFile(at path: String, using random: any RandomSource = SystemRandomSource()) throws(SQLiteStoreError) -> StorageKey {
        try checkFolder(of: path)
        let temporary = path + ".tmp-" + SystemRandomSource().bytes(8).map { String($0, radix: 16) }.joined()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(0o600))
        guard fd >= 0 else { throw .keyFile(path: path, problem: .systemError(errno: errno)) }
        let key = generate(using: random)
        var failure: Int32?
        // The mode given to open is filtered by the umask, which can only remove bits; set it
        // exactly anyway.
        if fchmod(fd, mode_t(0o600)) != 0 { failure = errno }
        if failure == nil {
            failure = key.withUnsafeBytes { bytes -> Int32? in
                guard let base = bytes.baseAddress else { return EINVAL }
                var written = 0
                while written < bytes.count {
                    let n = write(fd, base + written, bytes.count - written)
                    if n < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    written += n
                }
                return nil
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = errno }
        if close(fd) != 0, failure == nil { failure = errno }
        if failure == nil, link(temporary, path) != 0 { failure = errno }
        unlink(temporary)
        if let failure {
            throw .keyFile(path: path, problem: failure == EEXIST ? .alreadyExists : .systemError(errno: failure))
        }
        syncParentFolder(of: path)
        return key
    }

    /// The folder holding `path`.
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Checks that only this user (or root) can change the entries of the folder holding
    /// `path`: nobody else can put another key file there.
    /// - Throws: `SQLiteStoreError.keyFile` with `.folderWritableByOthers`,
    ///   `.folderOwnedByAnotherUser`, or `.systemError` when the folder cannot be examined.
    static func checkFolder(of path: String) throws(SQLiteStoreError) {
        var info = stat()
        guard stat(folder(of: path), &info) == 0 else { throw .keyFile(path: path, problem: .systemError(errno: errno)) }
        let owner = UInt32(info.st_uid)
        guard owner == UInt32(geteuid()) || owner == 0 else {
            throw .keyFile(path: path, problem: .folderOwnedByAnotherUser(uid: owner))
        }
        let mode = UInt32(info.st_mode) & 0o7777
        guard mode & 0o022 == 0 else { throw .keyFile(path: path, problem: .folderWritableByOthers(mode: mode)) }
    }

    /// Best effort: makes the new directory entry durable (a crash right after creating the key
    /// must not lose the file while the database written with the key survives).
    static func syncParentFolder(of path: String) {
        let fd = open(folder(of: path), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Reads the key in the key file at `path` (version 1 or 2).
    /// - Throws: `SQLiteStoreError.keyFile` with `.missing` when there is no file,
    ///   `.notARegularFile` for a symbolic link or a non-regular file, `.ownedByAnotherUser`
    ///   when it does not belong to the process's effective user, `.permissionsTooOpen` when
    ///   its group or others have any access, `.folderWritableByOthers` or
    ///   `.folderOwnedByAnotherUser` when its folder is not private to this user,
    ///   `.wrongLength` unless it holds exactly 32 bytes (or a version-2 file's 61),
    ///   `.unrecognizedFormat` for 61 bytes that are not a version-2 file, `.systemError`
    ///   when it cannot be read.
    public static func readKeyFile(at path: String) throws(SQLiteStoreError) -> StorageKey {
        try readKeyFileContents(at: path).key
    }

    /// The store epoch kept in the key file at `path` (`KeyFileEpochKeeper`), or `nil` for a
    /// version-1 file (no epoch written yet).
    /// - Throws: the errors of `readKeyFile(at:)`.
    public static func readKeyFileEpoch(at path: String) throws(SQLiteStoreError) -> StoreEpoch? {
        try readKeyFileContents(at: path).epoch
    }

    /// Writes `epoch` into the key file at `path`, upgrading a version-1 file to version 2: the
    /// same key and the epoch are written to a new file in the same folder (`O_EXCL`, mode
    /// 0600), synced, and renamed over the old one, so a crash leaves either file whole. When
    /// the file already holds an epoch of the same store (`StoreEpoch.fileID`) that is not
    /// below `epoch`, nothing is written: the kept epoch never goes back.
    /// - Throws: the errors of `readKeyFile(at:)`, `SQLiteStoreError.keyFile` with
    ///   `.systemError` when the new file cannot be written or renamed (the old one is then
    ///   left as it was).
    public static func writeKeyFileEpoch(_ epoch: StoreEpoch, at path: String) throws(SQLiteStoreError) {
        let current = try readKeyFileContents(at: path)
        if let held = current.epoch, held.fileID == epoch.fileID, held.value >= epoch.value { return }
        var contents = keyFileMagic + [keyFileVersion2]
        contents.reserveCapacity(version2ByteCount)
        current.key.withUnsafeBytes { contents.append(contentsOf: $0) }
        contents += epoch.serialized
        defer { SecureMemory.zero(&contents) }
        let temporary = path + ".tmp-" + SystemRandomSource().bytes(8).map { String($0, radix: 16) }.joined()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(0o600))
        guard fd >= 0 else { throw .keyFile(path: path, problem: .systemError(errno: errno)) }
        var failure: Int32?
        if fchmod(fd, mode_t(0o600)) != 0 { failure = errno }
        if failure == nil { failure = writeAll(contents, to: fd) }
        if failure == nil, fsync(fd) != 0 { failure = errno }
        if close(fd) != 0, failure == nil { failure = errno }
        if failure == nil, rename(temporary, path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw .keyFile(path: path, problem: .systemError(errno: failure))
        }
        syncParentFolder(of: path)
    }

    /// The magic of a version-2 key file.
    private static let keyFileMagic: [UInt8] = Array("SKKF".utf8)
    /// The version byte of a version-2 key file.
    private static let keyFileVersion2: UInt8 = 2
    /// The length of a version-2 key file: magic, version, key, epoch.
    private static let version2ByteCount = 4 + 1 + byteCount + StoreEpoch.serializedByteCount

    /// Writes every byte of `bytes` to `fd`; returns `errno` on failure.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32? {
        bytes.withUnsafeBytes { buffer -> Int32? in
            guard let base = buffer.baseAddress else { return EINVAL }
            var written = 0
            while written < buffer.count {
                let n = write(fd, base + written, buffer.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += n
            }
            return nil
        }
    }

    /// Opens the file at `path` for reading after the checks every key file gets (not a
    /// symbolic link, a regular file of this user, no access for others, a private folder):
    /// its descriptor (the caller closes it) and its size.
    static func openPrivateFile(at path: String) throws(SQLiteStoreError) -> (fd: Int32, size: off_t) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT: throw .keyFile(path: path, problem: .missing)
            case ELOOP: throw .keyFile(path: path, problem: .notARegularFile)
            default: throw .keyFile(path: path, problem: .systemError(errno: code))
            }
        }
        do throws(SQLiteStoreError) {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw .keyFile(path: path, problem: .systemError(errno: errno)) }
            guard (UInt32(info.st_mode) & UInt32(S_IFMT)) == UInt32(S_IFREG) else {
                throw .keyFile(path: path, problem: .notARegularFile)
            }
            guard UInt32(info.st_uid) == UInt32(geteuid()) else {
                throw .keyFile(path: path, problem: .ownedByAnotherUser(uid: UInt32(info.st_uid)))
            }
            let mode = UInt32(info.st_mode) & 0o7777
            guard mode & 0o077 == 0 else { throw .keyFile(path: path, problem: .permissionsTooOpen(mode: mode)) }
            try checkFolder(of: path)
            return (fd, info.st_size)
        } catch {
            close(fd)
            throw error
        }
    }

    /// The key and (version 2) the epoch in the key file at `path`, after the checks of
    /// `readKeyFile(at:)`. The key is read straight into wiping storage.
    private static func readKeyFileContents(at path: String) throws(SQLiteStoreError) -> (key: StorageKey, epoch: StoreEpoch?) {
        let (fd, size) = try openPrivateFile(at: path)
        defer { close(fd) }
        guard size == off_t(byteCount) || size == off_t(version2ByteCount) else {
            throw .keyFile(path: path, problem: .wrongLength(found: Int(clamping: Int64(size))))
        }
        // Read one byte more than the longest file, so a file that grew since fstat is caught too.
        var readFailure: Int32?
        var total = 0
        let storage = SecureBytes(count: version2ByteCount + 1) { buffer in
            guard let base = buffer.baseAddress else { return }
            while total < buffer.count {
                let n = read(fd, base + total, buffer.count - total)
                if n < 0 {
                    if errno == EINTR { continue }
                    readFailure = errno
                    return
                }
                if n == 0 { break }
                total += n
            }
        }
        if let readFailure { throw .keyFile(path: path, problem: .systemError(errno: readFailure)) }
        if total == byteCount {
            let key = storage.withUnsafeBytes { bytes in
                StorageKey(uncheckedStorage: SecureBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[..<byteCount])))
            }
            return (key, nil)
        }
        guard total == version2ByteCount else { throw .keyFile(path: path, problem: .wrongLength(found: total)) }
        let parsed = storage.withUnsafeBytes { bytes -> (StorageKey, [UInt8])? in
            guard Array(bytes[0 ..< 4]) == keyFileMagic, bytes[4] == keyFileVersion2 else { return nil }
            let key = StorageKey(uncheckedStorage: SecureBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[5 ..< 5 + byteCount])))
            return (key, Array(bytes[(5 + byteCount) ..< version2ByteCount]))
        }
        guard let (key, epochBytes) = parsed, let epoch = try? StoreEpoch(serialized: epochBytes) else {
            throw .keyFile(path: path, problem: .unrecognizedFormat)
        }
        return (key, epoch)
    }

    /// Reads the key file at `path`, or creates it with a new random key when there is none
    /// (the first launch). Two processes racing to create it end up with the same key: the
    /// loser of the `O_EXCL` race reads the winner's file.
    ///
    /// A key file that exists but cannot be used is an error, never replaced: a new key would
    /// make the existing store unreadable.
    /// - Throws: the errors of `readKeyFile(at:)` and `createKeyFile(at:using:)`.
    public static func loadOrCreateKeyFile(at path: String, using random: any RandomSource = SystemRandomSource()) throws(SQLiteStoreError) -> StorageKey {
        do {
            return try readKeyFile(at: path)
        } catch .keyFile(_, .missing) {
            do {
                return try createKeyFile(at: path, using: random)
            } catch .keyFile(_, .alreadyExists) {
                return try readKeyFile(at: path)
            }
        }
    }
}
