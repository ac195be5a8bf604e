#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SignalPrimitives

/// The files the processes of one test share, under one folder:
///
/// - `mail/QUEUE/TIME-ENVELOPE`: envelopes waiting for the client `QUEUE` (the "server");
///   acknowledging one renames it into `acked/QUEUE/` (so the evidence of everything ever posted
///   stays).
/// - `ledger/CLIENT.log`: the client's append-only log, one line per event, each written with
///   one `write(2)` on an `O_APPEND` descriptor (see `Ledger`).
/// - `inbox/ACCOUNT/MESSAGE-ID`: the plaintexts the account's clients stored (keyed by the
///   app-level message id, so a message processed twice is stored once).
/// - `outbox/CLIENT/NUMBER` and `sent/CLIENT/NUMBER`: messages queued by the user and not yet
///   posted, and those posted.
/// - `tmp/`: where files are written before they are renamed into place.
///
/// Every file appears with `rename(2)` once complete, so a killed process never leaves half a
/// file where another looks.
struct Workspace: Sendable {
    /// The folder.
    let root: String

    init(_ root: String) throws {
        self.root = root
        for folder in ["mail", "acked", "ledger", "inbox", "outbox", "sent", "tmp"] { try Self.makeFolder(root + "/" + folder) }
    }

    /// Creates `path` (and its parents) when missing.
    static func makeFolder(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The names in `folder` (not starting with a dot), sorted.
    func names(in folder: String) throws -> [String] {
        let path = root + "/" + folder
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// The contents of `root/relative`, or `nil` when there is no such file.
    func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: root + "/" + relative).map { [UInt8]($0) }
    }

    /// Writes `bytes` to `root/relative` atomically: to a file in `tmp/` first, then renamed
    /// into place (replacing a file of that name).
    func writeAtomically(_ bytes: [UInt8], to relative: String) throws {
        let temporary = "\(root)/tmp/\(getpid())-\(UInt64.random(in: 0 ... UInt64.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(0o600))
        guard fd >= 0 else { throw StressError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard result > 0 else {
                close(fd)
                throw StressError("cannot write \(temporary): \(String(cString: strerror(errno)))")
            }
            written += result
        }
        close(fd)
        try rename(from: "tmp/" + String(temporary.split(separator: "/").last ?? ""), to: relative)
    }

    /// Renames `root/from` to `root/to` (atomic on one file system).
    func rename(from: String, to: String) throws {
        guard Foundation.rename(root + "/" + from, root + "/" + to) == 0 else {
            throw StressError("cannot rename \(from) to \(to): \(String(cString: strerror(errno)))")
        }
    }
}

/// A posted message as a file: who sent it, its app-level message id, its envelope id (unique
/// per post, like a server's message id) and the ciphertext.
struct Envelope: Sendable {
    /// The sender's address (`user.device`).
    let sender: String
    /// The app-level message id (what the plaintext carries; a resend keeps it).
    let messageID: String
    /// The envelope id (a resend of a message gets a new one).
    let envelopeID: String
    /// The ciphertext.
    let bytes: [UInt8]

    /// The file's text: four `key value` lines.
    var encoded: [UInt8] {
        Array("from \(sender)\nmessage \(messageID)\nenvelope \(envelopeID)\nbytes \(hex(bytes))\n".utf8)
    }

    init(sender: String, messageID: String, envelopeID: String, bytes: [UInt8]) {
        self.sender = sender
        self.messageID = messageID
        self.envelopeID = envelopeID
        self.bytes = bytes
    }

    /// Decodes a file written by `encoded`.
    init(decoding file: [UInt8]) throws {
        var fields: [String: String] = [:]
        for line in String(decoding: file, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard let sender = fields["from"], let messageID = fields["message"], let envelopeID = fields["envelope"],
              let text = fields["bytes"], let bytes = unhex(text) else {
            throw StressError("a malformed envelope")
        }
        self.init(sender: sender, messageID: messageID, envelopeID: envelopeID, bytes: bytes)
    }
}

/// The append-only log of one client: `TIME EVENT CLIENT INSTANCE FIELDS...` lines, where TIME
/// is `CLOCK_MONOTONIC` in nanoseconds (one clock for every process on the machine) and
/// INSTANCE names this process run. Each line is one `write(2)` to an `O_APPEND` descriptor,
/// so it is in the file, whole, before the call returns (a process killed later cannot lose
/// it), and lines of processes appending to one file never interleave.
final class Ledger: @unchecked Sendable {
    private let fd: Int32
    private let client: String
    /// This process run's id (random).
    let instance: String
    private let lock = NSLock()

    init(path: String, client: String) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode_t(0o600))
        guard fd >= 0 else { throw StressError("cannot open \(path): \(String(cString: strerror(errno)))") }
        self.client = client
        instance = String(format: "%016llx", UInt64.random(in: 0 ... UInt64.max))
    }

    deinit { close(fd) }

    /// Appends one line.
    func log(_ event: String, _ fields: String...) throws {
        lock.lock()
        defer { lock.unlock() }
        let line = Array(([String(monotonicNanoseconds()), event, client, instance] + fields).joined(separator: " ").utf8) + [0x0A]
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == line.count else { throw StressError("ledger write failed: \(String(cString: strerror(errno)))") }
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// `CLOCK_REALTIME` in nanoseconds (orders mail files across processes).
func realtimeNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Lowercase hex (`Hex.encode`).
func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.encode(bytes) }

/// The bytes of lowercase or uppercase hex, or `nil` (`Hex.decode`).
func unhex(_ text: String) -> [UInt8]? { Hex.decode(text) }

private func nibble(_ digit: UInt8) -> UInt8? {
    switch digit {
    case 0x30 ... 0x39: return digit - 0x30
    case 0x61 ... 0x66: return digit - 0x61 + 10
    case 0x41 ... 0x46: return digit - 0x41 + 10
    default: return nil
    }
}
