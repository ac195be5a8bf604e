#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalPrimitives

/// The files of exports, restores and passphrase key files, through POSIX calls.
enum ExportFiles {
    /// The folder holding `path`.
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// A fresh name next to `path`: `path` + `suffix` + 16 random hex digits.
    static func temporaryPath(for path: String, suffix: String) -> String {
        path + suffix + SecureRandom.bytes(8).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }

    /// The system's message for `code`.
    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// Whether anything (even a dangling symbolic link) is at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Best effort: makes the folder's entries durable.
    static func syncFolder(of path: String) {
        let fd = open(folder(of: path), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        _ = close(fd)
    }
}

/// A file read in pieces.
final class ExportInputFile {
    private var fd: Int32
    private let path: String
    private var buffer: [UInt8]

    /// Opens the file at `path`, to be read `pieceSize` bytes at a time.
    /// - Throws: the system's reason, with the path.
    init(path: String, pieceSize: Int) throws(AccountExportError) {
        self.path = path
        buffer = [UInt8](repeating: 0, count: pieceSize)
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .file("\(path): \(ExportFiles.reason(errno))") }
    }

    deinit { _ = close(fd) }

    /// Calls `body` with the next piece and returns true, or returns false at the end.
    /// - Throws: `body`'s error, or `.file` when the file cannot be read.
    func next(_ body: (UnsafeRawBufferPointer) throws(AccountExportError) -> Void) throws(AccountExportError) -> Bool {
        while true {
            let size = buffer.count
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, size) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .file("\(path): \(ExportFiles.reason(errno))")
            }
            if n == 0 { return false }
            try buffer.withBytes { (all: UnsafeRawBufferPointer) throws(AccountExportError) in
                try body(UnsafeRawBufferPointer(rebasing: all[0 ..< n]))
            }
            return true
        }
    }
}

/// A file written under a temporary name (mode 0600, `O_EXCL`) in its destination's folder and
/// moved into place by `commit`; `discard` (or a failed commit) removes it.
final class TemporaryOutputFile {
    /// Where the file goes.
    let destination: String
    /// Its temporary name.
    let temporaryPath: String
    private var fd: Int32
    /// The first write failure, reported by `commit`.
    private(set) var failure: String?

    /// Creates the temporary file.
    /// - Throws: the system's reason, with the path.
    init(destination: String) throws(AccountExportError) {
        self.destination = destination
        temporaryPath = ExportFiles.temporaryPath(for: destination, suffix: ".tmp-")
        fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(0o600))
        guard fd >= 0 else { throw .file("\(destination): \(ExportFiles.reason(errno))") }
        _ = fchmod(fd, mode_t(0o600))
    }

    deinit { discard() }

    /// Appends `bytes` (a failure is remembered and reported by `commit`).
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, fd >= 0, let base = bytes.baseAddress else { return }
        var written = 0
        while written < bytes.count {
            let n = systemWrite(fd, base + written, bytes.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                failure = "\(destination): \(ExportFiles.reason(errno))"
                return
            }
            written += n
        }
    }

    /// Syncs the file and moves it to `destination`: replacing what is there, or, with
    /// `replace` false, failing with `EEXIST` when anything is there (`link`, then `unlink`).
    /// - Throws: the first write failure or the system's reason, with the path.
    func commit(replace: Bool) throws(AccountExportError) {
        if let failure { throw .file(failure) }
        if fsync(fd) != 0 { throw .file("\(destination): \(ExportFiles.reason(errno))") }
        let closed = close(fd)
        fd = -1
        if closed != 0 { throw .file("\(destination): \(ExportFiles.reason(errno))") }
        if replace {
            guard rename(temporaryPath, destination) == 0 else { throw .file("\(destination): \(ExportFiles.reason(errno))") }
        } else {
            guard link(temporaryPath, destination) == 0 else {
                let code = errno
                throw code == EEXIST ? .targetExists(path: destination) : .file("\(destination): \(ExportFiles.reason(code))")
            }
            unlink(temporaryPath)
        }
        ExportFiles.syncFolder(of: destination)
    }

    /// Closes and removes the temporary file (nothing when it was committed).
    func discard() {
        if fd >= 0 {
            _ = close(fd)
            fd = -1
        }
        unlink(temporaryPath)
    }
}

/// `write(2)`, out of reach of `TemporaryOutputFile.write`'s name.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}
