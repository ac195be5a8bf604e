import Foundation
import GRDB
@_spi(Testing) import SessionKit
@_spi(Testing) import SessionKitAge
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import Verification
import XCTest

/// Account export and restore (SPEC §10): what an export holds, what restore rebuilds, the
/// errors that leave nothing behind, and the per-item report.
final class AccountExportTests: XCTestCase {
    private let bob = address("bob", 1)
    private let carol = address("carol 🐦", 2)
    private let dave = address("dave", 7)
    private let eve = address("eve", 1)
    /// The work factor of the tests' passphrase exports: the smallest an export accepts.
    private let workFactor = AccountExport.minimumWorkFactor
    private let passphrase = "correct horse battery staple"

    /// The messages of the source store: (conversation, id, timestamp, plaintext).
    private let messages: [(String, String, Int64, [UInt8])] = [
        ("bob", "m1", 1_000, Array("hello Bob".utf8)),
        ("bob", "m2", 2_000, []),
        ("bob", "quote\"back\\slash\n\u{1}", 2_000, Array(0 ... 255)),
        ("carol 🐦", "m1", -5, Array("same id, other conversation".utf8)),
        ("carol 🐦", "ünïcödé", Int64.max, Array(repeating: 0x41, count: 70_000)),
    ]

    /// A store with an identity, four trust records (trusted on two devices, verified, changed
    /// and awaiting acceptance, accepted with a superseded key) and the messages above, and a
    /// conversation and a contact the export is not told about.
    private func makeSource() async throws -> SQLiteProtocolStore {
        let store = try SQLiteProtocolStore(path: try temporaryStorePath(), storageKey: try fixtureStorageKey())
        _ = try await store.observeIdentity(identityKey(0xb0), for: bob)
        _ = try await store.observeIdentity(identityKey(0xb0), for: address("bob", 3))
        try await store.markVerified(identityKey(0xc0), forUser: carol.userID)
        _ = try await store.observeIdentity(identityKey(0xd0), for: dave)
        _ = try await store.observeIdentity(identityKey(0xd1), for: dave)
        _ = try await store.observeIdentity(identityKey(0xe0), for: eve)
        try await store.acceptIdentityChange(identityKey(0xe1), forUser: eve.userID)
        _ = try await store.observeIdentity(identityKey(0xf0), for: address("frank", 1))
        for (conversation, id, timestamp, plaintext) in messages {
            try await store.appendArchivedMessage(plaintext, messageID: id, conversationID: conversation, timestamp: timestamp)
        }
        try await store.appendArchivedMessage(Array("unlisted".utf8), messageID: "x", conversationID: "unlisted", timestamp: 1)
        return store
    }

    private var contents: AccountExportContents {
        AccountExportContents(
            userID: "alice", contacts: [bob.userID, carol.userID, dave.userID, eve.userID, "nobody"],
            conversations: ["bob", "carol 🐦", "empty"])
    }

    /// Every message of `conversation`, newest first, as (id, timestamp, plaintext).
    private func allMessages(_ store: SQLiteProtocolStore, _ conversation: String) async throws -> [(String, Int64, [UInt8])] {
        var out: [(String, Int64, [UInt8])] = []
        var cursor: ArchiveCursor?
        repeat {
            let page = try await store.archivedMessages(inConversation: conversation, limit: 100, before: cursor)
            XCTAssertEqual(page.damagedCount, 0)
            out += page.messages.map { ($0.messageID, $0.timestamp, $0.plaintext.bytes) }
            cursor = page.nextCursor
        } while cursor != nil
        return out
    }

    /// Checks that `restored` holds what `source` holds for the listed contacts and
    /// conversations, and nothing of the unlisted ones.
    private func assertSameAccount(_ restored: SQLiteProtocolStore, _ source: SQLiteProtocolStore) async throws {
        XCTAssertEqual(restored.identity.publicKey, source.identity.publicKey)
        XCTAssertEqual(restored.identity.privateKey.seedRepresentation, source.identity.privateKey.seedRepresentation)
        for user in [bob.userID, carol.userID, dave.userID, eve.userID] {
            let original = try await source.record(forUser: user)
            XCTAssertNotNil(original)
            let copy = try await restored.record(forUser: user)
            XCTAssertEqual(copy, original, user)
        }
        let carolStatus = try await restored.status(forUser: carol.userID)
        XCTAssertEqual(carolStatus, .verified)
        let frank = try await restored.record(forUser: "frank")
        XCTAssertNil(frank, "an unlisted contact is not exported")
        for conversation in ["bob", "carol 🐦"] {
            let expected = messages.filter { $0.0 == conversation }
            let got = try await allMessages(restored, conversation)
            XCTAssertEqual(got.count, expected.count)
            for (id, timestamp, plaintext) in got {
                let match = expected.first { $0.1 == id }
                XCTAssertEqual(match?.2, timestamp, id)
                XCTAssertEqual(match?.3, plaintext, id)
            }
        }
        let unlisted = try await allMessages(restored, "unlisted")
        XCTAssertTrue(unlisted.isEmpty)
        // No sessions, prekeys or sender keys came along.
        let counts = try withRawDatabase(restored.path) { db in
            try ["sessions", "sending_chains", "receiver_states", "prekey_replay_records"].map {
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \($0)") ?? -1
            }
        }
        XCTAssertEqual(counts, [0, 0, 0, 0])
    }

    /// The files in `folder`.
    private func files(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    // MARK: - Round trips

    func testARecoveryCodeExportRestoresIdentityTrustAndArchiveWithANewRegistrationID() async throws {
        let source = try await makeSource()
        let folder = try temporaryFolder()
        let code = try AccountExport.newRecoveryCode()
        XCTAssertTrue(code.secretKeyString.hasPrefix("AGE-SECRET-KEY-1"))
        let exportPath = folder.appendingPathComponent("alice.age").path
        let report = try await source.exportAccount(
            contents, to: [AccountExportDestination(path: exportPath, protection: .recoveryCode(code.recipient))])
        XCTAssertEqual(report.trustRecordCount, 4)
        XCTAssertEqual(report.messageCount, messages.count)
        XCTAssertEqual(report.contactsWithoutRecord, ["nobody"])
        XCTAssertEqual(report.damagedMessageCount, 0)
        XCTAssertEqual(report.unlistedTrustRecordCount, 1, "frank")
        XCTAssertEqual(report.unlistedConversationCount, 1, "unlisted")
        XCTAssertEqual(try files(in: folder), ["alice.age"], "no temporary file is left")

        let target = folder.appendingPathComponent("restored.sqlite").path
        let newKey = StorageKey.generate()
        // The user types the code back: parsed from its string.
        let typed = try AgeX25519Identity(code.secretKeyString)
        let restoreReport = try await SQLiteProtocolStore.restoreAccount(
            from: exportPath, identities: [typed], to: target, storageKey: newKey, expectedIdentity: source.identity.publicKey)
        XCTAssertEqual(restoreReport.userID, "alice")
        XCTAssertEqual(restoreReport.importedTrustRecordCount, 4)
        XCTAssertEqual(restoreReport.importedMessageCount, messages.count)
        XCTAssertEqual(restoreReport.skipped, [])
        XCTAssertLessThanOrEqual(abs(restoreReport.created - Int64(Date().timeIntervalSince1970)), 600)
        XCTAssertNotEqual(restoreReport.registrationID, source.registrationID, "a restored device draws a new registration id")
        XCTAssertEqual(try files(in: folder), ["alice.age", "restored.sqlite"], "the store alone, closed (no -wal, no temporary)")

        let restored = try SQLiteProtocolStore(path: target, storageKey: newKey, options: SQLiteStoreOptions(createIfMissing: false))
        XCTAssertEqual(restored.registrationID, restoreReport.registrationID)
        try await assertSameAccount(restored, source)
        XCTAssertThrowsError(try SQLiteProtocolStore(path: target, storageKey: try fixtureStorageKey())) {
            XCTAssertEqual($0 as? SQLiteStoreError, .wrongStorageKey, "the restored store is sealed under the new key")
        }
    }

    func testOneCallWritesAPassphraseFileAndAnArmoredRecoveryCodeFileThatBothRestore() async throws {
        let source = try await makeSource()
        let folder = try temporaryFolder()
        let code = try AccountExport.newRecoveryCode()
        let passphraseFile = folder.appendingPathComponent("p.age").path, codeFile = folder.appendingPathComponent("c.age").path
        let report = try await source.exportAccount(contents, to: [
            AccountExportDestination(
                path: passphraseFile, protection: .passphrase(try AgeScryptRecipient(passphrase: passphrase, workFactor: workFactor))),
            AccountExportDestination(path: codeFile, protection: .recoveryCode(code.recipient), armored: true),
        ])
        XCTAssertEqual(report.messageCount, messages.count)
        let passphraseBytes = try Data(contentsOf: URL(fileURLWithPath: passphraseFile))
        XCTAssertTrue(passphraseBytes.starts(with: Array("age-encryption.org/v1\n-> scrypt ".utf8)), "binary, one scrypt stanza")
        let header = try AgeTesting.parseHeader([UInt8](passphraseBytes))
        XCTAssertEqual(header.stanzas.count, 1)
        XCTAssertEqual(header.stanzas.first?.arguments.last, String(workFactor))
        let armoredText = try String(contentsOfFile: codeFile, encoding: .utf8)
        XCTAssertTrue(armoredText.hasPrefix("-----BEGIN AGE ENCRYPTED FILE-----\n"))

        for (file, identity) in [(passphraseFile, try AgeScryptIdentity(passphrase: passphrase) as any AgeIdentity), (codeFile, code)] {
            let target = folder.appendingPathComponent("r-\(UUID().uuidString).sqlite").path
            let key = StorageKey.generate()
            // The recovery code's file is authenticated by the account's identity, the passphrase's by itself.
            let restoreReport = try await SQLiteProtocolStore.restoreAccount(
                from: file, identities: [identity], to: target, storageKey: key,
                expectedIdentity: identity is AgeX25519Identity ? source.identity.publicKey : nil)
            XCTAssertTrue(restoreReport.isAuthenticated)
            XCTAssertEqual(restoreReport.importedMessageCount, messages.count)
            XCTAssertEqual(restoreReport.importedTrustRecordCount, 4)
            try await assertSameAccount(try SQLiteProtocolStore(path: target, storageKey: key), source)
        }
    }

    func testTheDefaultWorkFactorIs18AndAWorkFactorOutside16To20IsRefusedWithoutWritingAFile() async throws {
        XCTAssertEqual(try AgeScryptRecipient(passphrase: passphrase).workFactor, 18)
        let source = try await makeSource()
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("weak.age").path
        do {
            _ = try await source.exportAccount(
                contents, to: [AccountExportDestination(path: path, protection: .passphrase(try AgeScryptRecipient(passphrase: passphrase, workFactor: 15)))])
            XCTFail("a work factor of 15 was accepted")
        } catch {
            XCTAssertEqual(error as? AccountExportError, .invalidArgument("an scrypt work factor of 15 (at least 16)"))
        }
        do {
            _ = try await source.exportAccount(
                contents, to: [AccountExportDestination(path: path, protection: .passphrase(try AgeScryptRecipient(passphrase: passphrase, workFactor: 21)))])
            XCTFail("a work factor of 21 was accepted")
        } catch {
            XCTAssertEqual(error as? AccountExportError, .invalidArgument("an scrypt work factor of 21 (at most 20, what readers accept)"))
        }
        do {
            _ = try await source.exportAccount(contents, to: [])
            XCTFail("no destination was accepted")
        } catch {
            XCTAssertEqual(error, .invalidArgument("no destination"))
        }
        XCTAssertEqual(try files(in: folder), [])
    }

    func testADamagedArchiveRowIsCountedAndLeftOutAndBadIdsAreRefused() async throws {
        let source = try await makeSource()
        let conversation = source.sealer.rowKey(Array("bob".utf8), in: .archiveConversation)
        try withRawDatabase(source.path) { db in
            try db.execute(
                sql: "UPDATE archive SET sealed = substr(sealed, 1, 30) || x'00' || substr(sealed, 32) WHERE conversation_hash = ? AND timestamp = 1000",
                arguments: [Data(conversation)])
        }
        let folder = try temporaryFolder()
        let code = try AgeX25519Identity()
        let path = folder.appendingPathComponent("a.age").path
        let report = try await source.exportAccount(contents, to: [AccountExportDestination(path: path, protection: .recoveryCode(code.recipient))])
        XCTAssertEqual(report.damagedMessageCount, 1)
        XCTAssertEqual(report.messageCount, messages.count - 1)
        let plaintext = try AgeDecryptor(identities: [code]).decrypt(Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertFalse([UInt8](plaintext).contains(subsequence: Array(#""id":"m1","timestamp":1000"#.utf8)))

        for (bad, expected) in [
            (AccountExportContents(userID: "", contacts: [], conversations: []), "the user id is not 1 to 255 UTF-8 bytes"),
            (AccountExportContents(userID: "alice", contacts: [String(repeating: "x", count: 256)], conversations: []),
             "a contact id is not 1 to 255 UTF-8 bytes"),
            (AccountExportContents(userID: "alice", contacts: [], conversations: [""]), "an empty conversation id"),
        ] {
            let target = folder.appendingPathComponent("bad.age").path
            do {
                _ = try await source.exportAccount(bad, to: [AccountExportDestination(path: target, protection: .recoveryCode(code.recipient))])
                XCTFail("accepted \(bad)")
            } catch {
                XCTAssertEqual(error, .invalidArgument(expected))
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: target))
        }
        XCTAssertEqual(try files(in: folder), ["a.age"])
    }
}
