import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@testable import SessionKit
@testable import SessionKitAge

/// age files cross the library and the two other implementations: the `age` command (Go, the
/// reference; Debian's `age`) and PyPI `pyrage` (Rust's `age` crate). Files the library writes
/// must decrypt with them, and files they write must decrypt with the library: X25519 and
/// scrypt, binary and armored, empty, one byte, 64 KiB, 64 KiB + 1 and a few MiB.
///
/// `make deps` installs both. Without them the tests skip with a message, unless the
/// environment variable CI is set: then they fail (CI must not skip them). The `age` command
/// reads passphrases only from a terminal, so scrypt files go through it on a pseudo-terminal
/// (Python's `pty`), typing the passphrase at its prompt.
final class AgeInteropTests: XCTestCase {
    static let sizes = [0, 1, 65536, 65537, 3 * 1024 * 1024 + 17]
    static let passphrase = "correct horse battery staple"
    /// A work factor that keeps the scrypt round trips fast (the tools accept any up to 22).
    static let workFactor = 14

    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("age-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    // MARK: - Tools

    private func requireAge() throws { try require("the age command", check: ["age", "--version"]) }
    private func requirePyrage() throws { try require("PyPI pyrage", check: ["python3", "-c", "import pyrage"]) }

    /// Skips (or, with CI set, fails) when `tool` is not usable.
    private func require(_ tool: String, check: [String]) throws {
        try ExternalTool.require([check], otherwise: "\(tool) is not installed (make deps installs it: apt-get install age, pip install pyrage)")
    }

    private func content(_ count: Int) -> Data {
        var state = UInt64(count) &* 0x9E37_79B9_7F4A_7C15 | 1
        return Data((0 ..< count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        })
    }

    private func file(_ name: String) -> URL { folder.appendingPathComponent(name) }

    /// Runs the `age` command on a pseudo-terminal, typing `passphrase` at each prompt.
    private func ageOnTerminal(_ arguments: [String]) throws -> ExternalTool.Output {
        let script = """
        import os, pty, select, sys, time
        passphrase = sys.argv[1].encode()
        pid, fd = pty.fork()
        if pid == 0:
            os.execvp(sys.argv[2], sys.argv[2:])
        seen, answered, deadline = b"", 0, time.time() + 300
        while time.time() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if fd not in ready:
                continue
            try:
                data = os.read(fd, 1024)
            except OSError:
                break
            if not data:
                break
            seen += data
            if seen.lower().count(b"passphrase") > answered and seen.rstrip().endswith(b":"):
                os.write(fd, passphrase + b"\\n")
                answered += 1
        _, status = os.waitpid(pid, 0)
        sys.stderr.write(seen.decode(errors="replace"))
        sys.exit(os.waitstatus_to_exitcode(status))
        """
        let path = file("age-pty.py")
        try Data(script.utf8).write(to: path)
        return try ExternalTool.run(["python3", path.path, Self.passphrase, "age"] + arguments)
    }

    /// Runs a Python snippet with pyrage; `sys.argv[1:]` are `arguments`.
    private func pyrage(_ code: String, _ arguments: [String]) throws -> ExternalTool.Output {
        let path = file("pyrage-\(UUID().uuidString).py")
        try Data(("import sys, pyrage\n" + code).utf8).write(to: path)
        return try ExternalTool.run(["python3", path.path] + arguments)
    }

    // MARK: - The library writes, the tools read

    func testFilesTheLibraryWritesDecryptWithTheAgeCommand() throws {
        try requireAge()
        let identity = try AgeX25519Identity()
        let keyFile = file("key.txt")
        try Data((identity.secretKeyString + "\n").utf8).write(to: keyFile)
        for armored in [false, true] {
            for size in Self.sizes {
                let plaintext = content(size)
                let encrypted = file("x-\(size)-\(armored).age")
                try AgeEncryptor(recipients: [identity.recipient], armored: armored).encrypt(plaintext).write(to: encrypted)
                let result = try ExternalTool.run(["age", "--decrypt", "-i", keyFile.path, encrypted.path])
                XCTAssertEqual(result.status, 0, "age -d (\(size) bytes, armored \(armored)): \(result.stderr)")
                XCTAssertEqual(result.stdout, plaintext, "\(size) bytes, armored \(armored)")
            }
        }
        // scrypt: through the terminal.
        for (size, armored) in [(0, false), (65537, true), (3 * 1024 * 1024 + 17, false)] {
            let plaintext = content(size)
            let encrypted = file("p-\(size).age"), decrypted = file("p-\(size).out")
            let recipient = try AgeScryptRecipient(passphrase: Self.passphrase, workFactor: Self.workFactor)
            try AgeEncryptor(recipients: [recipient], armored: armored).encrypt(plaintext).write(to: encrypted)
            let result = try ageOnTerminal(["--decrypt", "-o", decrypted.path, encrypted.path])
            XCTAssertEqual(result.status, 0, "age -d with a passphrase (\(size) bytes): \(result.stderr)")
            // age creates its output file at the first byte written: none for an empty file.
            let output = size == 0 && !FileManager.default.fileExists(atPath: decrypted.path) ? Data() : try Data(contentsOf: decrypted)
            XCTAssertEqual(output, plaintext, "scrypt, \(size) bytes")
        }
    }

    func testFilesTheLibraryWritesDecryptWithPyrage() throws {
        try requirePyrage()
        let identity = try AgeX25519Identity()
        let decryptX25519 = """
        identity = pyrage.x25519.Identity.from_str(sys.argv[1])
        data = open(sys.argv[2], "rb").read()  # armored or binary: pyrage detects the armor
        sys.stdout.buffer.write(pyrage.decrypt(data, [identity]))
        """
        for armored in [false, true] {
            for size in Self.sizes {
                let plaintext = content(size)
                let encrypted = file("x-\(size)-\(armored).age")
                try AgeEncryptor(recipients: [identity.recipient], armored: armored).encrypt(plaintext).write(to: encrypted)
                let result = try pyrage(decryptX25519, [identity.secretKeyString, encrypted.path])
                XCTAssertEqual(result.status, 0, "pyrage.decrypt (\(size) bytes, armored \(armored)): \(result.stderr)")
                XCTAssertEqual(result.stdout, plaintext, "\(size) bytes, armored \(armored)")
            }
        }
        let decryptPassphrase = """
        sys.stdout.buffer.write(pyrage.passphrase.decrypt(open(sys.argv[2], "rb").read(), sys.argv[1]))
        """
        for (size, armored) in [(1, false), (65536, true), (3 * 1024 * 1024 + 17, false)] {
            let plaintext = content(size)
            let encrypted = file("p-\(size).age")
            let recipient = try AgeScryptRecipient(passphrase: Self.passphrase, workFactor: Self.workFactor)
            try AgeEncryptor(recipients: [recipient], armored: armored).encrypt(plaintext).write(to: encrypted)
            let result = try pyrage(decryptPassphrase, [Self.passphrase, encrypted.path])
            XCTAssertEqual(result.status, 0, "pyrage.passphrase.decrypt (\(size) bytes): \(result.stderr)")
            XCTAssertEqual(result.stdout, plaintext, "scrypt, \(size) bytes")
        }
        // A damaged file is refused by pyrage too.
        let encrypted = file("damaged.age")
        var bytes = try AgeEncryptor(recipients: [identity.recipient]).encrypt(content(70000))
        bytes[bytes.count - 5] ^= 1
        try bytes.write(to: encrypted)
        XCTAssertNotEqual(try pyrage(decryptX25519, [identity.secretKeyString, encrypted.path]).status, 0)
    }

    // MARK: - The tools write, the library reads

    func testFilesTheAgeCommandWritesDecryptWithTheLibrary() throws {
        try requireAge()
        let identity = try AgeX25519Identity()
        for armored in [false, true] {
            for size in Self.sizes {
                let plaintext = content(size)
                let input = file("in-\(size)"), encrypted = file("in-\(size)-\(armored).age")
                try plaintext.write(to: input)
                let result = try ExternalTool.run(["age", "-r", identity.recipient.string] + (armored ? ["-a"] : []) + ["-o", encrypted.path, input.path])
                XCTAssertEqual(result.status, 0, result.stderr)
                let file = try Data(contentsOf: encrypted)
                XCTAssertEqual(file.starts(with: Data("-----BEGIN AGE ENCRYPTED FILE-----".utf8)), armored)
                XCTAssertEqual(try AgeDecryptor(identities: [identity]).decrypt(file), plaintext, "\(size) bytes, armored \(armored)")
            }
        }
        // The age command's own identities (age-keygen) work too.
        let keyFile = file("keygen.txt")
        XCTAssertEqual(try ExternalTool.run(["age-keygen", "-o", keyFile.path]).status, 0)
        let secret = try XCTUnwrap(String(decoding: try Data(contentsOf: keyFile), as: UTF8.self)
            .split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-1") })
        let keygenIdentity = try AgeX25519Identity(String(secret))
        let encrypted = try ExternalTool.run(["age", "-i", keyFile.path, "-e"], input: content(1000))
        XCTAssertEqual(encrypted.status, 0, encrypted.stderr)
        XCTAssertEqual(try AgeDecryptor(identities: [keygenIdentity]).decrypt(encrypted.stdout), content(1000))
        // scrypt: the age command's default work factor (18), through the terminal.
        for (size, armored) in [(0, true), (65536, false)] {
            let plaintext = content(size)
            let input = file("pin-\(size)"), encrypted = file("pin-\(size).age")
            try plaintext.write(to: input)
            let result = try ageOnTerminal(["--passphrase"] + (armored ? ["-a"] : []) + ["-o", encrypted.path, input.path])
            XCTAssertEqual(result.status, 0, "age -p: \(result.stderr)")
            let bytes = try Data(contentsOf: encrypted)
            XCTAssertEqual(try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: Self.passphrase)]).decrypt(bytes), plaintext)
            XCTAssertThrowsError(try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: "wrong")]).decrypt(bytes)) {
                XCTAssertEqual($0 as? AgeError, .noMatch)
            }
        }
    }

    func testFilesPyrageWritesDecryptWithTheLibrary() throws {
        try requirePyrage()
        let identity = try AgeX25519Identity()
        let encryptX25519 = """
        recipient = pyrage.x25519.Recipient.from_str(sys.argv[1])
        data = open(sys.argv[2], "rb").read()
        sys.stdout.buffer.write(pyrage.encrypt(data, [recipient], armored=(sys.argv[3] == "1")))
        """
        for armored in [false, true] {
            for size in Self.sizes {
                let plaintext = content(size)
                let input = file("in-\(size)")
                try plaintext.write(to: input)
                let result = try pyrage(encryptX25519, [identity.recipient.string, input.path, armored ? "1" : "0"])
                XCTAssertEqual(result.status, 0, result.stderr)
                XCTAssertEqual(result.stdout.starts(with: Data("-----BEGIN AGE ENCRYPTED FILE-----".utf8)), armored)
                XCTAssertEqual(try AgeDecryptor(identities: [identity]).decrypt(result.stdout), plaintext, "\(size) bytes, armored \(armored)")
            }
        }
        // A pyrage identity string and recipient parse in the library, and match.
        let generated = try pyrage("""
        identity = pyrage.x25519.Identity.generate()
        print(str(identity)); print(str(identity.to_public()))
        """, [])
        let lines = String(decoding: generated.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, generated.stderr)
        XCTAssertEqual(try AgeX25519Identity(lines[0]).recipient, try AgeX25519Recipient(lines[1]))
        // scrypt: pyrage picks its own work factor (about a second of work: 18 to 21 or so,
        // depending on the machine), so the identity accepts up to the age tool's limit, 22,
        // above the library's default (20).
        let encryptPassphrase = """
        sys.stdout.buffer.write(pyrage.passphrase.encrypt(open(sys.argv[2], "rb").read(), sys.argv[1], armored=(sys.argv[3] == "1")))
        """
        for (size, armored) in [(0, false), (65537, true)] {
            let plaintext = content(size)
            let input = file("pin-\(size)")
            try plaintext.write(to: input)
            let result = try pyrage(encryptPassphrase, [Self.passphrase, input.path, armored ? "1" : "0"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: Self.passphrase, maximumWorkFactor: 22)]).decrypt(result.stdout), plaintext)
        }
    }
}
