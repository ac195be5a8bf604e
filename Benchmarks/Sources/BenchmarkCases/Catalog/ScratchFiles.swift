import BenchmarkHarness
import CSodiumBench
import Foundation

/// A folder of large files for the `age.*` file rows: made under the system temporary
/// directory (`sessionkit-bench-<UUID>/`), removed with everything in it when the last
/// workload (or check) using it is released.
final class ScratchFiles: @unchecked Sendable {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sessionkit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    /// Writes `count` bytes of deterministic content (ChaCha20's keystream under a fixed key,
    /// 1 MiB at a time, the MiB's index as nonce) to `name`: the same file for every contender
    /// and every run.
    @discardableResult
    func writeContent(_ name: String, count: Int) throws -> URL {
        _ = SodiumBackend.isReady
        let url = url(name)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CheckFailure("cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let key = [UInt8](repeating: 0x5a, count: Int(crypto_stream_chacha20_KEYBYTES))
        let block = 1 << 20
        var buffer = [UInt8](repeating: 0, count: block)
        var written = 0, index: UInt64 = 0
        while written < count {
            var nonce = [UInt8](repeating: 0, count: Int(crypto_stream_chacha20_NONCEBYTES))
            for byte in 0 ..< 8 { nonce[byte] = UInt8(truncatingIfNeeded: index >> UInt64(8 * byte)) }
            let length = min(block, count - written)
            crypto_stream_chacha20(&buffer, UInt64(length), nonce, key)
            try handle.write(contentsOf: buffer[0 ..< length])
            written += length
            index += 1
        }
        return url
    }

    /// SHA-256 of a file, read 1 MiB at a time.
    static func sha256(of url: URL) throws -> [UInt8] {
        _ = SodiumBackend.isReady
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var state = crypto_hash_sha256_state()
        crypto_hash_sha256_init(&state)
        while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
            piece.withUnsafeBytes { _ = crypto_hash_sha256_update(&state, $0.u8, UInt64($0.count)) }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        crypto_hash_sha256_final(&state, &digest)
        return digest
    }

    /// The size of the file at `url`.
    static func size(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.size] as? NSNumber)?.intValue ?? -1
    }
}

/// One shared `ScratchFiles` per case: the contenders' workloads (and the check, while they
/// exist) use the same files, made once by `make`; the files are removed when the last of
/// them is released (the holder keeps only a weak reference).
final class SharedScratch<Files: AnyObject>: @unchecked Sendable {
    private weak var current: Files?
    private let lock = NSLock()
    private let make: () throws -> Files

    init(_ make: @escaping () throws -> Files) { self.make = make }

    func acquire() throws -> Files {
        lock.lock()
        defer { lock.unlock() }
        if let current { return current }
        let files = try make()
        current = files
        return files
    }
}

/// Finding and running the `age` command (Debian's `age`, the Go reference implementation).
enum AgeCommand {
    /// The path of `age` on `PATH` (or in /usr/bin, /usr/local/bin, /opt/homebrew/bin).
    /// - Throws: `CaseSkipped` when it is not installed: the rows that compare with it are
    ///   skipped, not failed (`make deps` installs it).
    static func locate() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"]
        for folder in folders where !folder.isEmpty {
            let candidate = URL(fileURLWithPath: folder).appendingPathComponent("age")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw CaseSkipped("the age command is not installed (`make deps` installs it: apt-get install age, brew install age)")
    }

    /// Runs `age` with `arguments` as a whole process and waits for it.
    /// - Throws: `CheckFailure` when it exits with a status other than 0.
    static func run(_ executable: URL, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw CheckFailure("age \(arguments.joined(separator: " ")) exited with \(process.terminationStatus): "
                + String(decoding: message.prefix(500), as: UTF8.self))
        }
    }
}
