#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@_spi(Testing) import SessionKit
@_spi(Testing) import SessionKitAge
@testable import SessionKitSQLite
import SignalPrimitives
import XCTest

/// The storage key in an age scrypt file: create, read, change the passphrase, the file-system
/// checks, and the file read by PyPI `pyrage` (Rust's age) with the passphrase.
final class PassphraseKeyFileTests: XCTestCase {
    private let passphrase = "correct horse battery staple"
    /// The smallest work factor a key file accepts, to keep the tests fast.
    private let workFactor = 16

    private func keyBytes(_ key: StorageKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    private func permissions(_ path: String) throws -> Int {
        try XCTUnwrap((FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    func testAKeyFileIsAnScryptAgeFileWithMode0600ThatReadsBackAndOpensTheStore() throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("storage.age").path
        let key = try StorageKey.createPassphraseKeyFile(at: path, passphrase: passphrase, workFactor: workFactor)
        XCTAssertEqual(try permissions(path), 0o600)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["storage.age"], "no temporary file left")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let header = try AgeTesting.parseHeader(bytes)
        XCTAssertEqual(header.stanzas.map(\.type), ["scrypt"])
        XCTAssertEqual(header.stanzas.first?.arguments.last, "16")
        XCTAssertFalse(bytes.contains(subsequence: keyBytes(key)), "the key is not in the file in clear")
        let read = try StorageKey.readPassphraseKeyFile(at: path, passphrase: passphrase)
        XCTAssertEqual(keyBytes(read), keyBytes(key))
        // The key opens a store created with it.
        let storePath = folder.appendingPathComponent("account.sqlite").path
        try SQLiteProtocolStore(path: storePath, storageKey: key).close()
        XCTAssertNoThrow(try SQLiteProtocolStore(path: storePath, storageKey: read).close())
    }

    func testTheDefaultWorkFactorIs18() throws {
        let path = try temporaryFolder().appendingPathComponent("storage.age").path
        _ = try StorageKey.createPassphraseKeyFile(at: path, passphrase: passphrase)
        let header = try AgeTesting.parseHeader(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        XCTAssertEqual(header.stanzas.first?.arguments.last, "18")
    }

    func testAWrongPassphraseIsATypedErrorAndOtherFilesAreNotKeyFiles() throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("storage.age").path
        _ = try StorageKey.createPassphraseKeyFile(at: path, passphrase: passphrase, workFactor: workFactor)
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: path, passphrase: "wrong")) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .wrongPassphrase))
        }
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: path, passphrase: passphrase, maximumWorkFactor: 15)) {
            guard case .keyFile(_, .notAPassphraseKeyFile) = $0 as? SQLiteStoreError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: path, passphrase: "")) {
            guard case .invalidArgument = $0 as? SQLiteStoreError else { return XCTFail("\($0)") }
        }
        // A raw key file, an X25519 age file of 32 bytes, and an scrypt file of 31 bytes.
        let raw = folder.appendingPathComponent("raw.key").path
        _ = try StorageKey.createKeyFile(at: raw)
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: raw, passphrase: passphrase)) {
            guard case .keyFile(_, .notAPassphraseKeyFile) = $0 as? SQLiteStoreError else { return XCTFail("\($0)") }
        }
        let x25519 = folder.appendingPathComponent("x25519.age")
        try AgeEncryptor(recipients: [try AgeX25519Identity().recipient]).encrypt(Data(count: 32)).write(to: x25519)
        chmod(x25519.path, 0o600)
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: x25519.path, passphrase: passphrase)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: x25519.path, problem: .wrongPassphrase), "no scrypt stanza: no match")
        }
        let short = folder.appendingPathComponent("short.age")
        try AgeEncryptor(recipients: [try AgeScryptRecipient(passphrase: passphrase, workFactor: workFactor)]).encrypt(Data(count: 31)).write(to: short)
        chmod(short.path, 0o600)
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: short.path, passphrase: passphrase)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: short.path, problem: .wrongLength(found: 31)))
        }
        // A damaged file.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count - 1] ^= 1
        let damaged = folder.appendingPathComponent("damaged.age")
        try bytes.write(to: damaged)
        chmod(damaged.path, 0o600)
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: damaged.path, passphrase: passphrase)) {
            guard case .keyFile(_, .notAPassphraseKeyFile) = $0 as? SQLiteStoreError else { return XCTFail("\($0)") }
        }
    }

    func testTheFileSystemChecksOfTheRawKeyFileApply() throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("storage.age").path
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: path, passphrase: passphrase)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .missing))
        }
        _ = try StorageKey.createPassphraseKeyFile(at: path, passphrase: passphrase, workFactor: workFactor)
        XCTAssertThrowsError(try StorageKey.createPassphraseKeyFile(at: path, passphrase: passphrase, workFactor: workFactor)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .alreadyExists), "never overwritten")
        }
        chmod(path, 0o640)
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: path, passphrase: passphrase)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .permissionsTooOpen(mode: 0o640)))
        }
        XCTAssertThrowsError(try StorageKey.changePassphrase(ofKeyFileAt: path, from: passphrase, to: "new one", workFactor: workFactor)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .permissionsTooOpen(mode: 0o640)))
        }
        chmod(path, 0o600)
        let link = folder.appendingPathComponent("link.age").path
        XCTAssertEqual(symlink(path, link), 0)
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: link, passphrase: passphrase)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: link, problem: .notARegularFile))
        }
        let open = folder.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        chmod(open.path, 0o777)
        let inOpen = open.appendingPathComponent("storage.age").path
        XCTAssertThrowsError(try StorageKey.createPassphraseKeyFile(at: inOpen, passphrase: passphrase, workFactor: workFactor)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: inOpen, problem: .folderWritableByOthers(mode: 0o777)))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: inOpen))
        for bad in [15, 21] {
            XCTAssertThrowsError(try StorageKey.createPassphraseKeyFile(
                at: folder.appendingPathComponent("w\(bad)").path, passphrase: passphrase, workFactor: bad)) {
                guard case .invalidArgument = $0 as? SQLiteStoreError else { return XCTFail("\($0)") }
            }
        }
    }

    func testChangingThePassphraseRewritesOnlyTheKeyFileAtomicallyAndKeepsTheKey() throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("storage.age").path
        let key = try StorageKey.createPassphraseKeyFile(at: path, passphrase: passphrase, workFactor: workFactor)
        let storePath = folder.appendingPathComponent("account.sqlite").path
        try SQLiteProtocolStore(path: storePath, storageKey: key).close()
        let storeBefore = try Data(contentsOf: URL(fileURLWithPath: storePath))
        let fileBefore = try Data(contentsOf: URL(fileURLWithPath: path))
        var inodeBefore = stat()
        XCTAssertEqual(stat(path, &inodeBefore), 0)

        // A wrong old passphrase changes nothing.
        XCTAssertThrowsError(try StorageKey.changePassphrase(ofKeyFileAt: path, from: "wrong", to: "new one", workFactor: workFactor)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .wrongPassphrase))
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), fileBefore)

        let changed = try StorageKey.changePassphrase(ofKeyFileAt: path, from: passphrase, to: "new one", workFactor: 17)
        XCTAssertEqual(keyBytes(changed), keyBytes(key))
        var inodeAfter = stat()
        XCTAssertEqual(stat(path, &inodeAfter), 0)
        XCTAssertNotEqual(inodeAfter.st_ino, inodeBefore.st_ino, "a new file renamed into place, not rewritten in place")
        XCTAssertEqual(try permissions(path), 0o600)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), ["account.sqlite", "storage.age"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: storePath)), storeBefore, "the store is not rewritten")
        XCTAssertThrowsError(try StorageKey.readPassphraseKeyFile(at: path, passphrase: passphrase)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .wrongPassphrase))
        }
        let read = try StorageKey.readPassphraseKeyFile(at: path, passphrase: "new one")
        XCTAssertNoThrow(try SQLiteProtocolStore(path: storePath, storageKey: read).close())
    }

    func testPyrageDecryptsTheKeyFileWithThePassphraseIntoTheKeyBytes() throws {
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = ["python3", "-c", "import pyrage"]
        try check.run()
        check.waitUntilExit()
        guard check.terminationStatus == 0 else {
            let message = "PyPI pyrage is not installed (make deps installs it)"
            if ProcessInfo.processInfo.environment["CI"] != nil { XCTFail("\(message); CI must not skip the interoperability tests") }
            throw XCTSkip(message)
        }
        let path = try temporaryFolder().appendingPathComponent("storage.age").path
        let key = try StorageKey.createPassphraseKeyFile(at: path, passphrase: passphrase, workFactor: workFactor)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", "import sys, pyrage; sys.stdout.write(pyrage.passphrase.decrypt(open(sys.argv[1], 'rb').read(), sys.argv[2]).hex())",
            path, passphrase,
        ]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, String(decoding: stderr, as: UTF8.self))
        XCTAssertEqual(String(decoding: stdout, as: UTF8.self), keyBytes(key).map { String(format: "%02x", $0) }.joined())
    }
}
