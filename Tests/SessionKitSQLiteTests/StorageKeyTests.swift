#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@testable import SessionKitSQLite
import SignalPrimitives
import XCTest

/// `StorageKey` and its key-file helper.
final class StorageKeyTests: XCTestCase {
    private func permissions(_ path: String) throws -> Int {
        try XCTUnwrap((FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    func testAKeyMustBe32Bytes() {
        for count in [0, 16, 31, 33, 64] {
            XCTAssertThrowsError(try StorageKey(bytes: [UInt8](repeating: 1, count: count))) {
                XCTAssertEqual($0 as? SQLiteStoreError, .invalidStorageKeyLength(count))
            }
        }
        XCTAssertNoThrow(try StorageKey(bytes: fixtureStorageKeyBytes))
        XCTAssertThrowsError(try StorageKey(storage: SecureBytes(copying: [1, 2, 3]))) {
            XCTAssertEqual($0 as? SQLiteStoreError, .invalidStorageKeyLength(3))
        }
    }

    func testGeneratedKeysDifferAndNeverDescribeTheirBytes() {
        let a = StorageKey.generate(), b = StorageKey.generate()
        XCTAssertNotEqual(a.withUnsafeBytes { Array($0) }, b.withUnsafeBytes { Array($0) })
        XCTAssertEqual("\(a)", "StorageKey(32 bytes, redacted)")
        XCTAssertEqual(String(reflecting: a), "StorageKey(32 bytes, redacted)")
    }

    func testAKeyFileIsCreatedWithMode0600AndReadsBack() throws {
        let path = try temporaryFolder().appendingPathComponent("storage.key").path
        let created = try StorageKey.createKeyFile(at: path)
        XCTAssertEqual(try permissions(path), 0o600)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).count, 32)
        let read = try StorageKey.readKeyFile(at: path)
        XCTAssertEqual(read.withUnsafeBytes { Array($0) }, created.withUnsafeBytes { Array($0) })
        // No temporary file is left next to it.
        let folder = (path as NSString).deletingLastPathComponent
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), ["storage.key"])
    }

    func testCreatingNeverOverwritesAFile() throws {
        let path = try temporaryFolder().appendingPathComponent("storage.key").path
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try StorageKey.createKeyFile(at: path)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .alreadyExists))
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data([1, 2, 3]))
    }

    func testAKeyFileReadableByOthersIsRefused() throws {
        let path = try temporaryFolder().appendingPathComponent("storage.key").path
        _ = try StorageKey.createKeyFile(at: path)
        for mode in [0o644, 0o640, 0o604, 0o660] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            XCTAssertThrowsError(try StorageKey.readKeyFile(at: path)) {
                XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .permissionsTooOpen(mode: UInt32(mode))))
            }
            XCTAssertThrowsError(try StorageKey.loadOrCreateKeyFile(at: path), "never replaced by a new key")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: path)
        XCTAssertNoThrow(try StorageKey.readKeyFile(at: path))
    }

    func testAKeyFileOfAnotherUserIsRefused() throws {
        try XCTSkipUnless(geteuid() == 0, "only root can give a file to another user")
        let path = try temporaryFolder().appendingPathComponent("storage.key").path
        _ = try StorageKey.createKeyFile(at: path)
        XCTAssertEqual(chown(path, 12_345, 12_345), 0)
        XCTAssertThrowsError(try StorageKey.readKeyFile(at: path)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .ownedByAnotherUser(uid: 12_345)))
        }
        XCTAssertThrowsError(try StorageKey.loadOrCreateKeyFile(at: path), "never replaced by a new key")
    }

    func testAKeyFileInAFolderOthersCanWriteIsRefused() throws {
        let folder = try temporaryFolder().appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let path = folder.appendingPathComponent("storage.key").path
        _ = try StorageKey.createKeyFile(at: path)
        for mode in [0o770, 0o720, 0o707, 0o702, 0o1777] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: folder.path)
            XCTAssertThrowsError(try StorageKey.readKeyFile(at: path)) {
                XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .folderWritableByOthers(mode: UInt32(mode))))
            }
            XCTAssertThrowsError(try StorageKey.loadOrCreateKeyFile(at: path), "never replaced by a new key")
            // Creating one there is refused before anything is written.
            let other = folder.appendingPathComponent("other.key").path
            XCTAssertThrowsError(try StorageKey.createKeyFile(at: other)) {
                XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: other, problem: .folderWritableByOthers(mode: UInt32(mode))))
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["storage.key"])
        }
        // Readable and listable by others is fine: only writing lets them replace the file.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        XCTAssertNoThrow(try StorageKey.readKeyFile(at: path))
    }

    func testAKeyFileInAFolderOfAnotherUserIsRefused() throws {
        try XCTSkipUnless(geteuid() == 0, "only root can give a folder to another user")
        let folder = try temporaryFolder().appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        let path = folder.appendingPathComponent("storage.key").path
        _ = try StorageKey.createKeyFile(at: path)
        XCTAssertEqual(chown(folder.path, 12_345, 12_345), 0)
        XCTAssertThrowsError(try StorageKey.readKeyFile(at: path)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .folderOwnedByAnotherUser(uid: 12_345)))
        }
        let other = folder.appendingPathComponent("other.key").path
        XCTAssertThrowsError(try StorageKey.createKeyFile(at: other)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: other, problem: .folderOwnedByAnotherUser(uid: 12_345)))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: other))
    }

    func testAKeyFileOfTheWrongLengthIsRefused() throws {
        let folder = try temporaryFolder()
        for count in [0, 31, 33] {
            let path = folder.appendingPathComponent("key-\(count)").path
            XCTAssertTrue(FileManager.default.createFile(
                atPath: path, contents: Data(repeating: 7, count: count), attributes: [.posixPermissions: 0o600]))
            XCTAssertThrowsError(try StorageKey.readKeyFile(at: path)) {
                XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: path, problem: .wrongLength(found: count)))
            }
        }
    }

    func testAMissingKeyFileOrASymbolicLinkIsRefused() throws {
        let folder = try temporaryFolder()
        let missing = folder.appendingPathComponent("missing.key").path
        XCTAssertThrowsError(try StorageKey.readKeyFile(at: missing)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: missing, problem: .missing))
        }
        let target = folder.appendingPathComponent("real.key").path
        _ = try StorageKey.createKeyFile(at: target)
        let link = folder.appendingPathComponent("link.key").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        XCTAssertThrowsError(try StorageKey.readKeyFile(at: link)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: link, problem: .notARegularFile))
        }
        XCTAssertThrowsError(try StorageKey.readKeyFile(at: folder.path)) {
            XCTAssertEqual($0 as? SQLiteStoreError, .keyFile(path: folder.path, problem: .notARegularFile))
        }
    }

    func testLoadOrCreateCreatesOnceThenReads() throws {
        let path = try temporaryFolder().appendingPathComponent("storage.key").path
        let first = try StorageKey.loadOrCreateKeyFile(at: path)
        let second = try StorageKey.loadOrCreateKeyFile(at: path)
        XCTAssertEqual(first.withUnsafeBytes { Array($0) }, second.withUnsafeBytes { Array($0) })
        XCTAssertEqual(try permissions(path), 0o600)
    }

    func testAStoreOpensWithTheKeyFromItsKeyFile() async throws {
        let folder = try temporaryFolder()
        let keyPath = folder.appendingPathComponent("storage.key").path
        let storePath = folder.appendingPathComponent("account.sqlite").path
        let store = try SQLiteProtocolStore(path: storePath, storageKey: try StorageKey.loadOrCreateKeyFile(at: keyPath))
        let identity = try await store.localIdentity()
        try store.close()
        let reopened = try SQLiteProtocolStore(path: storePath, storageKey: try StorageKey.loadOrCreateKeyFile(at: keyPath))
        let again = try await reopened.localIdentity()
        XCTAssertEqual(again.publicKey, identity.publicKey)
    }
}
