import BenchmarkHarness
import Foundation
import SessionKit

/// `age.cli.{encrypt,decrypt}.256MiB` (SPEC §10, issue 20): the same 256 MiB file encrypted
/// and decrypted, file to file, to an X25519 recipient, by the library
/// (`AgeEncryptor.encrypt(contentsOf:to:)`, `AgeDecryptor.decrypt(contentsOf:to:)`) and by the
/// `age` command as a whole process (`age -e -r age1… -o out in`, `age -d -i key.txt -o out
/// in`), which takes the floor column. Wall clock (the command runs in another process); the
/// library must be faster: library / age ≤ 1.00. Skipped, with the reason, where `age` is not
/// installed. In the smoke run (`BENCH_QUICK`) the file is 4 MiB (`age.cli.*.4MiB`).
enum AgeCLICases {
    /// library / age.
    static let target = RatioTargets(floor: 1.00)
    /// Each operation takes about a second on a 256 MiB file: a few interleaved rounds.
    static let rounds = 9

    static var all: [BenchmarkCase] {
        let (size, label) = FileRowSizes.cliFile
        let shared = SharedScratch { try Files(contentLength: size) }
        return [
            BenchmarkCase(
                name: "age.cli.encrypt.\(label)",
                summary: "encrypt a \(label) file to a new file for an X25519 recipient; floor: the age command (Go) as a whole process",
                group: .files, targets: target, clock: .wall, maximumRounds: rounds,
                library: { try encryptWithLibrary(shared.acquire()) },
                floor: { try encryptWithCommand(shared.acquire()) }, swiftCrypto: nil,
                check: { try checkEncryption(shared.acquire()) }),
            BenchmarkCase(
                name: "age.cli.decrypt.\(label)",
                summary: "decrypt a \(label) age file (X25519) to a new file; floor: the age command (Go) as a whole process",
                group: .files, targets: target, clock: .wall, maximumRounds: rounds,
                library: { try decryptWithLibrary(shared.acquire()) },
                floor: { try decryptWithCommand(shared.acquire()) }, swiftCrypto: nil,
                check: { try checkDecryption(shared.acquire()) }),
        ]
    }

    /// The plaintext, an identity and its key file, and the plaintext encrypted to it by the
    /// library (the file both contenders decrypt).
    final class Files: @unchecked Sendable {
        let scratch: ScratchFiles
        let age: URL
        let identity: AgeX25519Identity
        let plaintext: URL
        let keyFile: URL
        let encrypted: URL
        let plaintextDigest: [UInt8]

        init(contentLength: Int) throws {
            age = try AgeCommand.locate()
            scratch = try ScratchFiles()
            identity = try AgeX25519Identity()
            plaintext = try scratch.writeContent("plaintext", count: contentLength)
            keyFile = scratch.url("key.txt")
            try Data((identity.secretKeyString + "\n").utf8).write(to: keyFile)
            encrypted = scratch.url("encrypted.age")
            try AgeEncryptor(recipients: [identity.recipient]).encrypt(contentsOf: plaintext, to: encrypted)
            plaintextDigest = try ScratchFiles.sha256(of: plaintext)
        }

        var recipient: String { identity.recipient.string }
    }

    static func encryptWithLibrary(_ files: Files) -> Workload {
        let encryptor = AgeEncryptor(recipients: [files.identity.recipient])
        let output = files.scratch.url("library.age")
        return .repeating { try encryptor.encrypt(contentsOf: files.plaintext, to: output) }
    }

    static func encryptWithCommand(_ files: Files) -> Workload {
        let output = files.scratch.url("command.age")
        return .repeating { try AgeCommand.run(files.age, ["-e", "-r", files.recipient, "-o", output.path, files.plaintext.path]) }
    }

    static func decryptWithLibrary(_ files: Files) -> Workload {
        let decryptor = AgeDecryptor(identities: [files.identity])
        let output = files.scratch.url("library.out")
        return .repeating { try decryptor.decrypt(contentsOf: files.encrypted, to: output) }
    }

    static func decryptWithCommand(_ files: Files) -> Workload {
        let output = files.scratch.url("command.out")
        return .repeating { try AgeCommand.run(files.age, ["-d", "-i", files.keyFile.path, "-o", output.path, files.encrypted.path]) }
    }

    /// Each side's file decrypts with the other side to the plaintext.
    static func checkEncryption(_ files: Files) throws {
        let byLibrary = files.scratch.url("check-library.age"), byCommand = files.scratch.url("check-command.age")
        let openedByCommand = files.scratch.url("check-library.out"), openedByLibrary = files.scratch.url("check-command.out")
        defer { for url in [byLibrary, byCommand, openedByCommand, openedByLibrary] { try? FileManager.default.removeItem(at: url) } }
        try AgeEncryptor(recipients: [files.identity.recipient]).encrypt(contentsOf: files.plaintext, to: byLibrary)
        try AgeCommand.run(files.age, ["-e", "-r", files.recipient, "-o", byCommand.path, files.plaintext.path])
        try AgeCommand.run(files.age, ["-d", "-i", files.keyFile.path, "-o", openedByCommand.path, byLibrary.path])
        try AgeDecryptor(identities: [files.identity]).decrypt(contentsOf: byCommand, to: openedByLibrary)
        try CheckFailure.expect(
            hex(try ScratchFiles.sha256(of: openedByCommand)), equals: hex(files.plaintextDigest), "the library's file opened by age")
        try CheckFailure.expect(
            hex(try ScratchFiles.sha256(of: openedByLibrary)), equals: hex(files.plaintextDigest), "age's file opened by the library")
    }

    /// Both sides decrypt the same file to the plaintext.
    static func checkDecryption(_ files: Files) throws {
        let byLibrary = files.scratch.url("check-library.out"), byCommand = files.scratch.url("check-command.out")
        defer { for url in [byLibrary, byCommand] { try? FileManager.default.removeItem(at: url) } }
        try AgeDecryptor(identities: [files.identity]).decrypt(contentsOf: files.encrypted, to: byLibrary)
        try AgeCommand.run(files.age, ["-d", "-i", files.keyFile.path, "-o", byCommand.path, files.encrypted.path])
        try CheckFailure.expect(hex(try ScratchFiles.sha256(of: byLibrary)), equals: hex(files.plaintextDigest), "library")
        try CheckFailure.expect(hex(try ScratchFiles.sha256(of: byCommand)), equals: hex(files.plaintextDigest), "age")
    }
}

/// The file sizes of the `age.*` file rows: the sizes, smaller in the smoke run
/// (`BENCH_QUICK` set to anything but `0` or empty), where CI has a time budget.
enum FileRowSizes {
    static var smoke: Bool {
        let value = ProcessInfo.processInfo.environment["BENCH_QUICK"] ?? ""
        return !(value.isEmpty || value == "0")
    }

    /// The file of the `age.cli.*` rows: 256 MiB (4 MiB in the smoke run).
    static var cliFile: (Int, String) { smoke ? (4 << 20, "4MiB") : (256 << 20, "256MiB") }

    /// The file of the `age.memory.*` rows: 1 GiB (64 MiB in the smoke run, still twice the
    /// 32 MiB target, so that a reader holding the whole file would miss it).
    static var memoryFile: (Int, String) { smoke ? (64 << 20, "64MiB") : (1 << 30, "1GiB") }

    /// The scrypt work factor of `age.scrypt.*`: 18, age's default (10 in the smoke run).
    static var scryptWorkFactor: Int { smoke ? 10 : AgeScryptRecipient.defaultWorkFactor }
}
