#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The temporary files of `AtomicFileWriter` (`.<name>.partial-<hex>`), and the removal of those
/// that a process left behind when it died (they may hold decrypted plaintext).
///
/// A partial file is removed only when all of these hold, so that a decryption still running
/// (in this process or another) keeps its file:
/// - its name is `.` + a destination name + `.partial-` + 1 to 16 lowercase hex digits;
/// - it is a regular file (not a link) owned by this process's effective user;
/// - it was not modified for `minimumAge` seconds (a live writer writes as it decrypts);
/// - nobody holds its `flock`: every writer holds an exclusive lock on its file until it is
///   renamed or removed, and the system releases the lock of a process that died. (On a file
///   system without `flock`, taking the lock fails and the file is kept.)
package enum PartialFiles {
    /// What separates the destination name from the random suffix.
    static let marker = ".partial-"
    /// The age below which a partial file is never removed: 15 minutes (the public sweeps'
    /// default, `AgeDecryptor.removeStalePartialFiles(in:olderThan:)` and
    /// `Attachment.removeStalePartialFiles(in:olderThan:)`, is the same).
    static let defaultMinimumAge: Int64 = 15 * 60

    /// The start of the partial files' names for the destination `name`.
    static func prefix(of name: String) -> String { "." + name + marker }

    /// Whether `name` is a partial file's name (any destination): `.`, at least one byte, the
    /// marker (its last occurrence), the suffix.
    static func isPartialName(_ name: String) -> Bool {
        let bytes = Array(name.utf8), mark = Array(marker.utf8)
        guard bytes.first == 0x2E, bytes.count >= 2 + mark.count + 1 else { return false }
        for start in stride(from: bytes.count - mark.count - 1, through: 2, by: -1) where bytes[start ..< start + mark.count].elementsEqual(mark) {
            return isSuffix(bytes[(start + mark.count)...])
        }
        return false
    }

    /// 1 to 16 lowercase hex digits (the random suffix).
    static func isSuffix<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        (1 ... 16).contains(bytes.count) && bytes.allSatisfy { (0x30 ... 0x39).contains($0) || (0x61 ... 0x66).contains($0) }
    }

    /// Removes the stale partial files in `folder`: those whose names start with `namePrefix`
    /// (one destination's) or, with `nil`, every partial file; returns the names removed.
    /// - Throws: `FileAccessError` when the folder cannot be listed; a file that cannot be
    ///   examined, locked or removed is skipped.
    @discardableResult
    package static func removeStale(in folder: String, namePrefix: String?, minimumAge: Int64) throws(FileAccessError) -> [String] {
        let now = Int64(time(nil))
        var removed: [String] = []
        for name in try names(in: folder) {
            if let namePrefix {
                guard name.utf8.starts(with: namePrefix.utf8), isSuffix(name.utf8.dropFirst(namePrefix.utf8.count)) else { continue }
            } else {
                guard isPartialName(name) else { continue }
            }
            let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
            if removeIfStale(path, now: now, minimumAge: minimumAge) { removed.append(name) }
        }
        return removed
    }

    /// Removes the file at `path` when it is stale (see the type's rules).
    static func removeIfStale(_ path: String, now: Int64, minimumAge: Int64) -> Bool {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        // Closing releases the lock taken below, after the file is unlinked.
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else { return false }
        guard now - modificationSeconds(info) >= max(minimumAge, 0) else { return false }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        // The name still leads to the file examined (nobody renamed another file to it).
        var named = stat()
        guard lstat(path, &named) == 0, named.st_dev == info.st_dev, named.st_ino == info.st_ino else { return false }
        return unlink(path) == 0
    }

    /// The last modification of a file, in seconds since 1970.
    static func modificationSeconds(_ info: stat) -> Int64 {
        #if canImport(Darwin)
        return Int64(info.st_mtimespec.tv_sec)
        #else
        return Int64(info.st_mtim.tv_sec)
        #endif
    }

    /// The names in `folder` (without `.` and `..`).
    /// - Throws: `FileAccessError` when it cannot be opened.
    static func names(in folder: String) throws(FileAccessError) -> [String] {
        guard let directory = opendir(folder) else { throw FileAccessError("cannot list the folder", path: folder, errno: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
