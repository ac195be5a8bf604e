#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignalPrimitives

/// A failed file operation: the path, what was attempted and the system's reason.
package struct FileAccessError: Error, CustomStringConvertible {
    package let description: String

    init(_ operation: String, path: String, errno code: Int32) {
        description = "\(operation) \(path): \(String(cString: strerror(code)))"
    }

    init(_ message: String) { description = message }
}

/// The file-system path of a file URL.
package func filePath(of url: URL) throws(FileAccessError) -> String {
    guard url.isFileURL else { throw FileAccessError("not a file URL: \(url)") }
    return url.path(percentEncoded: false)
}

/// A file opened for reading, closed on release (POSIX descriptors: the library's file code
/// runs the same on Linux and Apple platforms, without Foundation's `FileHandle`).
package final class ReadableFile {
    package let path: String
    private let descriptor: Int32

    /// Opens `url` for reading.
    /// - Throws: `FileAccessError` when it cannot be opened or is not a regular file.
    package init(_ url: URL) throws(FileAccessError) {
        path = try filePath(of: url)
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileAccessError("cannot open", path: path, errno: errno) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw FileAccessError("cannot examine", path: path, errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw FileAccessError("not a regular file: \(path)")
        }
    }

    deinit { close(descriptor) }

    /// The file's current length.
    /// - Throws: `FileAccessError` when `fstat` fails.
    package func byteCount() throws(FileAccessError) -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileAccessError("cannot examine", path: path, errno: errno) }
        return UInt64(max(info.st_size, 0))
    }

    /// Reads up to `buffer.count` bytes at the current position; 0 at the end of the file.
    /// - Throws: `FileAccessError` on a read error.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(FileAccessError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = systemRead(descriptor, base, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw FileAccessError("cannot read", path: path, errno: errno)
        }
    }

    /// Reads exactly `buffer.count` bytes at `offset`; fewer only at the end of the file
    /// (returns how many).
    /// - Throws: `FileAccessError` on a read error or an offset beyond `off_t`.
    package func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(FileAccessError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            guard let position = off_t(exactly: offset + UInt64(done)) else { throw FileAccessError("offset beyond the file system's range in \(path)") }
            let n = pread(descriptor, base + done, buffer.count - done, position)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileAccessError("cannot read", path: path, errno: errno)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads the file from the current position to its end in pieces of at most `chunk`
    /// bytes, handing each to `body`.
    /// - Throws: `FileAccessError` on a read error, or what `body` throws.
    func forEachPiece<E: Error>(size chunk: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> Void) throws(FileError<E>) {
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let n: Int
            do {
                n = try buffer.withMutableBytes { (b: UnsafeMutableRawBufferPointer) throws(FileAccessError) in try read(into: b) }
            } catch {
                throw .access(error)
            }
            if n == 0 { return }
            do {
                try buffer.withBytes { (b: UnsafeRawBufferPointer) throws(E) in try body(UnsafeRawBufferPointer(rebasing: b[0 ..< n])) }
            } catch {
                throw .body(error)
            }
        }
    }
}

/// Either a file error or the error of the code that processed the file's bytes.
enum FileError<E: Error>: Error {
    case access(FileAccessError)
    case body(E)
}

/// Writes a file so that it appears whole or not at all: the bytes go to a new temporary file
/// in the destination's folder (mode 0600, `O_EXCL`), which `commit` syncs and renames over
/// the destination. A writer released without `commit` removes its temporary file.
///
/// The temporary file is named `.<destination name>.partial-<random hex>` and holds plaintext
/// when the writer decrypts. A process that dies while writing leaves it behind, so the writer
/// holds an exclusive `flock` on its file from creation until it is renamed or removed (the
/// system drops the lock when the process dies), and `PartialFiles` removes only partial files
/// that nobody holds and that were not modified for a while. A new writer first removes the
/// stale partial files of its own destination (`PartialFiles.defaultMinimumAge`).
///
/// On Linux the writeback of every `writebackByteCount` bytes written is started at once
/// (`posix_fadvise(POSIX_FADV_DONTNEED)` on the range just written: it starts writing the dirty
/// pages and waits for nothing), so that the disk works while the file is being produced and
/// `commit`'s `fsync` waits only for the tail (issue 20: about 90 ms of a 256 MiB file).
package final class AtomicFileWriter {
    package let destination: String
    private let temporary: String
    private var descriptor: Int32
    private var finished = false
    /// Bytes written so far, and the offset up to which writeback was started.
    private var writtenByteCount: UInt64 = 0
    private var writebackStarted: UInt64 = 0
    /// The bytes written between two writeback requests.
    static let writebackByteCount: UInt64 = 8 << 20

    /// Creates the temporary file next to `url`.
    /// - Throws: `FileAccessError` when it cannot be created.
    package init(_ url: URL) throws(FileAccessError) {
        let path = try filePath(of: url)
        destination = path
        let folderEnd = path.lastIndex(of: "/")
        let name = folderEnd.map { String(path[path.index(after: $0)...]) } ?? path
        let folder = folderEnd.map { String(path[...$0]) } ?? ""
        // Partial files of this destination left by processes that died (best effort).
        _ = try? PartialFiles.removeStale(in: folder.isEmpty ? "." : folder, namePrefix: PartialFiles.prefix(of: name), minimumAge: PartialFiles.defaultMinimumAge)
        let created = try Self.createLocked(folder + PartialFiles.prefix(of: name), for: path)
        temporary = created.path
        descriptor = created.descriptor
    }

    /// Creates and locks a new file named `prefix` and a random hex suffix.
    private static func createLocked(_ prefix: String, for path: String) throws(FileAccessError) -> (path: String, descriptor: Int32) {
        for _ in 0 ..< 8 {
            let candidate = prefix + SecureRandom.bytes(8).map { String($0, radix: 16) }.joined()
            let fd = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(0o600))
            guard fd >= 0 else { throw FileAccessError("cannot create a temporary file for", path: path, errno: errno) }
            // The lock tells sweepers the file is in use (a file system without `flock` leaves
            // only the sweepers' age rule). A sweeper can take a file only between `open` and
            // `flock`, and only with a minimum age of zero (the file is new): then the lock is
            // the sweeper's or the name is gone, and a new name is drawn.
            if flock(fd, LOCK_EX | LOCK_NB) != 0, errno == EWOULDBLOCK {
                close(fd)
                continue
            }
            var opened = stat(), named = stat()
            if fstat(fd, &opened) == 0, lstat(candidate, &named) == 0, opened.st_dev == named.st_dev, opened.st_ino == named.st_ino {
                return (candidate, fd)
            }
            close(fd)
        }
        throw FileAccessError("the temporary file for \(path) was removed while it was being created")
    }

    deinit { discard() }

    /// Appends `bytes`.
    /// - Throws: `FileAccessError` on a write error (disk full, …).
    package func write(_ bytes: UnsafeRawBufferPointer) throws(FileAccessError) {
        guard let base = bytes.baseAddress, descriptor >= 0 else { return }
        var written = 0
        while written < bytes.count {
            let n = systemWrite(descriptor, base + written, bytes.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileAccessError("cannot write", path: temporary, errno: errno)
            }
            written += n
        }
        writtenByteCount += UInt64(bytes.count)
        if writtenByteCount - writebackStarted >= Self.writebackByteCount { startWriteback() }
    }

    /// Starts the writeback of what was written since the last call (Linux only; a hint,
    /// whose failure changes nothing: `commit` syncs anyway).
    private func startWriteback() {
        #if canImport(Glibc) || canImport(Musl)
        if let offset = off_t(exactly: writebackStarted), let length = off_t(exactly: writtenByteCount - writebackStarted) {
            _ = posix_fadvise(descriptor, offset, length, POSIX_FADV_DONTNEED)
        }
        #endif
        writebackStarted = writtenByteCount
    }

    /// Syncs the temporary file and renames it over the destination, then closes it (the lock
    /// is held until the file has its final name).
    /// - Throws: `FileAccessError` when the sync or the rename fails (the temporary file is
    ///   removed then).
    package func commit() throws(FileAccessError) {
        guard descriptor >= 0 else { throw FileAccessError("the file for \(destination) was already closed") }
        if fsync(descriptor) != 0 {
            let code = errno
            discard()
            throw FileAccessError("cannot sync", path: temporary, errno: code)
        }
        if rename(temporary, destination) != 0 {
            let code = errno
            discard()
            throw FileAccessError("cannot rename the temporary file to", path: destination, errno: code)
        }
        finished = true
        // The data is synced and in place: an error of `close` now changes nothing.
        close(descriptor)
        descriptor = -1
    }

    /// Removes and closes the temporary file (nothing happens after `commit`).
    package func discard() {
        guard !finished else { return }
        unlink(temporary)
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        finished = true
    }
}

#if canImport(Darwin)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { Darwin.read(fd, buffer, count) }
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Darwin.write(fd, buffer, count) }
#elseif canImport(Glibc)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { Glibc.read(fd, buffer, count) }
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Glibc.write(fd, buffer, count) }
#elseif canImport(Musl)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { Musl.read(fd, buffer, count) }
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Musl.write(fd, buffer, count) }
#endif
