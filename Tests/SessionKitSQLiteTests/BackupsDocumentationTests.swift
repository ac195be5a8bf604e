import Foundation
import SessionKit
@testable import SessionKitSQLite
import TestSupport
import Verification
import XCTest

/// The samples of SessionKitSQLite.docc/BackupsAndKeyFiles.md, compiled and run, and checked
/// to be the article's text (between the `// --- BackupsAndKeyFiles.md, "<section>" ---` and
/// `// --- end` markers); the article's example lines restore as the items it describes.
final class BackupsDocumentationTests: XCTestCase {
    static let article = "Sources/SessionKitSQLite/SessionKitSQLite.docc/BackupsAndKeyFiles.md"

    func testTheSamplesRunAndAreTheArticles() async throws {
        let folder = try temporaryFolder()
        let codeBackupPath = folder.appendingPathComponent("alice-code.age").path
        let passphraseBackupPath = folder.appendingPathComponent("alice-passphrase.age").path
        let newKeyPath = folder.appendingPathComponent("new.key.age").path
        let newDatabasePath = folder.appendingPathComponent("new.sqlite").path
        let keyPath = folder.appendingPathComponent("other.key.age").path
        let passphrase = "correct horse battery staple", newPassphrase = "a new passphrase"
        let store = try SQLiteProtocolStore(path: folder.appendingPathComponent("alice.sqlite").path, storageKey: StorageKey.generate())
        try await store.markVerified(identityKey(0xb0), forUser: "bob")
        try await store.appendArchivedMessage(Array("hello".utf8), messageID: "m1", conversationID: "family", timestamp: 1)

        // --- BackupsAndKeyFiles.md, "Export" ---
        let code = try AccountExport.newRecoveryCode()
        let recoveryCode = code.secretKeyString              // show it once: AGE-SECRET-KEY-1…

        let report = try await store.exportAccount(.everything(userID: "alice"), to: [
            AccountExportDestination(path: codeBackupPath, protection: .recoveryCode(code.recipient)),
            AccountExportDestination(path: passphraseBackupPath,
                                     protection: .passphrase(try AgeScryptRecipient(passphrase: passphrase)),
                                     armored: true),
        ])
        // --- end ---
        XCTAssertEqual(report.trustRecordCount, 1)
        XCTAssertEqual(report.contactsWithoutRecord, [])
        XCTAssertEqual(report.messageCount, 1)
        XCTAssertTrue(report.isComplete)

        let accountIdentityKey = store.identity.publicKey   // what the app's server holds for Alice

        // --- BackupsAndKeyFiles.md, "Restore" ---
        let typed = try AgeX25519Identity(recoveryCode)      // what the user typed
        let newKey = try StorageKey.createPassphraseKeyFile(at: newKeyPath, passphrase: passphrase)
        // The account's identity key, as your server knows it: an export someone else wrote to the
        // code's recipient is refused, and a contact's "verified" is restored only when it matches.
        let restored = try await SQLiteProtocolStore.restoreAccount(
            from: codeBackupPath, identities: [typed], to: newDatabasePath, storageKey: newKey, expectedIdentity: accountIdentityKey)
        for item in restored.skipped { print("not restored:", item) }   // line, kind, reason
        let newStore = try SQLiteProtocolStore(path: newDatabasePath, storageKey: newKey)
        // --- end ---
        XCTAssertEqual(restored.skipped, [])
        XCTAssertEqual(newStore.identity.publicKey, store.identity.publicKey)
        let bobStatus = try await newStore.status(forUser: "bob")
        XCTAssertEqual(bobStatus, .verified)
        let passphraseRestore = try await SQLiteProtocolStore.restoreAccount(
            from: passphraseBackupPath, identities: [try AgeScryptIdentity(passphrase: passphrase)],
            to: folder.appendingPathComponent("second.sqlite").path, storageKey: StorageKey.generate())
        XCTAssertEqual(passphraseRestore.importedMessageCount, 1)

        // --- BackupsAndKeyFiles.md, "Passphrase key files" ---
        let key = try StorageKey.createPassphraseKeyFile(at: keyPath, passphrase: passphrase)
        // later launches
        let sameKey = try StorageKey.readPassphraseKeyFile(at: keyPath, passphrase: passphrase)
        // the user changes the passphrase: only the small key file is rewritten
        try StorageKey.changePassphrase(ofKeyFileAt: keyPath, from: passphrase, to: newPassphrase)
        // --- end ---
        XCTAssertEqual(key.withUnsafeBytes { Array($0) }, sameKey.withUnsafeBytes { Array($0) })
        let afterChange = try StorageKey.readPassphraseKeyFile(at: keyPath, passphrase: newPassphrase)
        XCTAssertEqual(afterChange.withUnsafeBytes { Array($0) }, key.withUnsafeBytes { Array($0) })

        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let text = try PackageDocuments.text(Self.article)
        for (section, heading) in [("Export", "### Export"), ("Restore", "### Restore"), ("Passphrase key files", "### Passphrase key files")] {
            let tested = try PackageDocuments.lines(
                of: source, between: "        // --- BackupsAndKeyFiles.md, \"\(section)\" ---", and: "// --- end", indentation: 8)
            XCTAssertEqual(try PackageDocuments.firstSwiftBlock(in: text, after: heading), tested, section)
        }
    }

    func testTheArticlesExampleLinesRestoreAsTheItemsItDescribes() async throws {
        let text = try PackageDocuments.text(Self.article)
        let start = try XCTUnwrap(text.range(of: "For example:\n\n```\n"))
        let end = try XCTUnwrap(text[start.upperBound...].range(of: "```"))
        let header = #"{"format":"sessionkit-export","version":1,"user":"alice","created":1764150000}"#
        XCTAssertTrue(text.contains("```\n" + header + "\n```"), "the article shows the header as written")
        let plaintext = header + "\n" + text[start.upperBound ..< end.lowerBound]
        let folder = try temporaryFolder()
        let code = try AgeX25519Identity()
        let file = folder.appendingPathComponent("example.age")
        try AgeEncryptor(recipients: [code.recipient]).encrypt(Data(plaintext.utf8)).write(to: file)
        let key = StorageKey.generate()
        let target = folder.appendingPathComponent("example.sqlite").path
        let report = try await SQLiteProtocolStore.restoreAccount(
            from: file.path, identities: [code], to: target, storageKey: key,
            expectedIdentity: try IdentityKeyPair(seed: [UInt8](repeating: 7, count: 32)).publicKey)
        XCTAssertEqual(report.skipped, [])
        XCTAssertEqual(report.importedTrustRecordCount, 1)
        XCTAssertEqual(report.importedMessageCount, 1)
        let store = try SQLiteProtocolStore(path: target, storageKey: key)
        XCTAssertEqual(store.identity.privateKey.seedRepresentation, [UInt8](repeating: 7, count: 32))
        let bob = try await store.record(forUser: "bob")
        XCTAssertEqual(bob, TrustRecord(identityKey: identityKey(0xb0), status: .verified, previousIdentityKey: nil, devices: [1, 2],
                                        supersededIdentityKeys: []))
        let page = try await store.archivedMessages(inConversation: "bob", limit: 5)
        XCTAssertEqual(page.messages.map(\.timestamp), [1_764_150_000_123])
        XCTAssertEqual(page.messages.first?.plaintext.bytes, Array("hello".utf8))
    }
}
