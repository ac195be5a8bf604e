import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import Verification
import XCTest

/// The plaintext an export holds (SPEC §10's JSON Lines, checked with Foundation's
/// `JSONSerialization` here and with Python's `json` module through the `age` command), files
/// the `age` command writes restoring, and bounded memory for a 100,000-message archive.
final class AccountExportFormatTests: XCTestCase {
    private let bob = address("bob", 1)

    /// A store with Bob trusted and verified on two devices and `count` messages in
    /// conversation "bob" (message i: id "m<i>", timestamp i, body "message <i>").
    private func makeSource(messageCount count: Int) async throws -> SQLiteProtocolStore {
        let store = try SQLiteProtocolStore(
            path: try temporaryStorePath(), storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(durability: .processCrash))
        _ = try await store.observeIdentity(identityKey(0xb0), for: bob)
        _ = try await store.observeIdentity(identityKey(0xb0), for: address("bob", 2))
        try await store.markVerified(identityKey(0xb0), forUser: "bob")
        // Written a thousand per transaction (a message per transaction would take minutes).
        for start in stride(from: 0, to: count, by: 1000) {
            let rows = try (start ..< min(start + 1000, count)).map { index in
                try Array("message \(index)".utf8).withUnsafeBytes {
                    try store.sealArchivedMessage($0, messageID: "m\(index)", conversationID: "bob", timestamp: Int64(index))
                }
            }
            try await store.writeTransaction { db in
                for row in rows {
                    try db.execute(
                        sql: "INSERT INTO archive (conversation_hash, message_hash, timestamp, sealed) VALUES (?, ?, ?, ?)",
                        arguments: [Data(row.conversationHash), Data(row.messageHash), row.timestamp, Data(row.sealed)])
                }
            }
        }
        return store
    }

    private func export(_ store: SQLiteProtocolStore, to code: AgeX25519Identity, armored: Bool = false) async throws -> (URL, String, AccountExportReport) {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("export.age").path
        let report = try await store.exportAccount(
            AccountExportContents(userID: "alice \"A\"", contacts: ["bob"], conversations: ["bob"]),
            to: [AccountExportDestination(path: path, protection: .recoveryCode(code.recipient), armored: armored)])
        return (folder, path, report)
    }

    func testThePlaintextIsJSONLinesWithTheHeaderFirstAndOneItemPerLine() async throws {
        let store = try await makeSource(messageCount: 3)
        let code = try AgeX25519Identity()
        let (_, path, _) = try await export(store, to: code)
        let plaintext = try AgeDecryptor(identities: [code]).decrypt(Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(plaintext.last, 0x0A, "every line ends with LF")
        XCTAssertNotNil(String(data: plaintext, encoding: .utf8), "UTF-8")
        let lines = plaintext.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, 1 + 1 + 1 + 3)
        let objects = try lines.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]) }

        // The header, exactly SPEC §10's four members, written compactly in its order.
        let header = objects[0]
        XCTAssertEqual(Set(header.keys), ["format", "version", "user", "created"])
        XCTAssertEqual(header["format"] as? String, "sessionkit-export")
        XCTAssertEqual(header["version"] as? Int, 1)
        XCTAssertEqual(header["user"] as? String, "alice \"A\"")
        let created = try XCTUnwrap(header["created"] as? Int)
        XCTAssertLessThanOrEqual(abs(created - Int(Date().timeIntervalSince1970)), 600, "Unix seconds")
        XCTAssertEqual(String(decoding: lines[lines.startIndex], as: UTF8.self),
                       #"{"format":"sessionkit-export","version":1,"user":"alice \"A\"","created":\#(created)}"#)

        // The identity: the seed and its public key.
        XCTAssertEqual(objects[1]["kind"] as? String, "identity")
        XCTAssertEqual(Set(objects[1].keys), ["kind", "seed", "publicKey"])
        XCTAssertEqual((objects[1]["seed"] as? String).flatMap { Data(base64Encoded: $0) }, Data(store.identity.privateKey.seedRepresentation))
        XCTAssertEqual((objects[1]["publicKey"] as? String).flatMap { Data(base64Encoded: $0) }, Data(store.identity.publicKey.rawRepresentation))

        // Bob's trust record with its verified state.
        let trust = objects[2]
        XCTAssertEqual(trust["kind"] as? String, "trust")
        XCTAssertEqual(trust["user"] as? String, "bob")
        XCTAssertEqual(trust["status"] as? String, "verified")
        XCTAssertEqual((trust["identityKey"] as? String).flatMap { Data(base64Encoded: $0) }, Data(repeating: 0xb0, count: 32))
        XCTAssertNil(trust["previousIdentityKey"])
        XCTAssertEqual(trust["devices"] as? [Int], [1, 2])
        XCTAssertEqual((trust["supersededIdentityKeys"] as? [String])?.count, 0)

        // The messages, newest first.
        for (offset, object) in objects[3...].enumerated() {
            let index = 2 - offset
            XCTAssertEqual(object["kind"] as? String, "message")
            XCTAssertEqual(object["conversation"] as? String, "bob")
            XCTAssertEqual(object["id"] as? String, "m\(index)")
            XCTAssertEqual(object["timestamp"] as? Int, index)
            XCTAssertEqual((object["body"] as? String).flatMap { Data(base64Encoded: $0) }, Data("message \(index)".utf8))
        }
        XCTAssertEqual(Set(objects.compactMap { $0["kind"] as? String }), ["identity", "trust", "message"], "no sessions, prekeys or sender keys")
    }

    func testStringsWithQuotesControlCharactersAndNonASCIIAreValidJSON() throws {
        let strings = ["", "plain", "quote \" backslash \\ slash /", "\u{0}\u{1}\u{1f}\n\r\t\u{7f}", "é 🐦 \u{2028} \u{fffd}"]
        for string in strings {
            var out: [UInt8] = []
            ExportLineEncoder.appendString(string, to: &out)
            let decoded = try JSONSerialization.jsonObject(with: Data(out), options: [.fragmentsAllowed]) as? String
            XCTAssertEqual(decoded, string)
            XCTAssertFalse(out.contains(0x0A), "no raw LF inside a line")
        }
    }

    func testBase64MatchesFoundationsForEveryLengthUpToFifty() {
        for count in 0 ... 50 {
            let bytes = (0 ..< count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            var out: [UInt8] = []
            bytes.withUnsafeBytes { ExportLineEncoder.appendBase64($0, to: &out) }
            XCTAssertEqual(String(decoding: out, as: UTF8.self), Data(bytes).base64EncodedString(), "\(count) bytes")
        }
    }

    // MARK: - The age command

    /// Skips (or, with CI set, fails) without the `age` command and Python 3.
    private func requireAge() throws {
        try ExternalTool.require([["age", "--version"], ["python3", "-c", "import json"]],
                                 otherwise: "the age command or python3 is not installed (make deps installs age)")
    }

    /// Runs `arguments` (`ExternalTool.run`).
    @discardableResult
    private func run(_ arguments: [String], input: Data? = nil) throws -> ExternalTool.Output {
        try ExternalTool.run(arguments, input: input)
    }

    func testTheAgeCommandDecryptsAnExportIntoJSONLinesThatPythonReads() async throws {
        try requireAge()
        let store = try await makeSource(messageCount: 2000)
        let code = try AgeX25519Identity()
        for armored in [false, true] {
            let (folder, path, _) = try await export(store, to: code, armored: armored)
            let keyFile = folder.appendingPathComponent("key.txt")
            try Data((code.secretKeyString + "\n").utf8).write(to: keyFile)
            let decrypted = try run(["age", "--decrypt", "-i", keyFile.path, path])
            XCTAssertEqual(decrypted.status, 0, decrypted.stderr)
            let check = """
            import json, sys
            lines = sys.stdin.buffer.read().decode("utf-8").split("\\n")
            assert lines[-1] == "", "the last line ends with LF"
            objects = [json.loads(line) for line in lines[:-1]]
            assert all(isinstance(o, dict) for o in objects)
            h = objects[0]
            assert sorted(h) == ["created", "format", "user", "version"], h
            assert h["format"] == "sessionkit-export" and h["version"] == 1 and h["user"] == 'alice "A"'
            assert isinstance(h["created"], int)
            kinds = [o["kind"] for o in objects[1:]]
            print(kinds.count("identity"), kinds.count("trust"), kinds.count("message"), len(kinds))
            """
            let python = try run(["python3", "-c", check], input: decrypted.stdout)
            XCTAssertEqual(python.status, 0, python.stderr)
            XCTAssertEqual(String(decoding: python.stdout, as: UTF8.self), "1 1 2000 2002\n", "armored \(armored)")
        }
    }

    func testAnExportTheAgeCommandEncryptedRestores() async throws {
        try requireAge()
        let store = try await makeSource(messageCount: 1500)
        let code = try AgeX25519Identity()
        let (folder, path, _) = try await export(store, to: code)
        let keyFile = folder.appendingPathComponent("key.txt")
        try Data((code.secretKeyString + "\n").utf8).write(to: keyFile)
        // The age command decrypts the library's file and encrypts the same plaintext again, to
        // another recovery code, binary and armored.
        let plaintext = try run(["age", "--decrypt", "-i", keyFile.path, path])
        XCTAssertEqual(plaintext.status, 0, plaintext.stderr)
        let other = try AgeX25519Identity()
        for armored in [false, true] {
            let reencrypted = folder.appendingPathComponent("by-age-\(armored).age")
            let result = try run(["age", "--encrypt", "-r", other.recipient.description] + (armored ? ["-a"] : []) + ["-o", reencrypted.path],
                                 input: plaintext.stdout)
            XCTAssertEqual(result.status, 0, result.stderr)
            let target = folder.appendingPathComponent("restored-\(armored).sqlite").path
            let key = StorageKey.generate()
            let report = try await SQLiteProtocolStore.restoreAccount(
                from: reencrypted.path, identities: [other], to: target, storageKey: key, expectedIdentity: store.identity.publicKey)
            XCTAssertEqual(report.importedMessageCount, 1500)
            XCTAssertEqual(report.importedTrustRecordCount, 1)
            XCTAssertEqual(report.skipped, [])
            let restored = try SQLiteProtocolStore(path: target, storageKey: key)
            XCTAssertEqual(restored.identity.publicKey, store.identity.publicKey)
            let page = try await restored.archivedMessages(inConversation: "bob", limit: 2)
            XCTAssertEqual(page.messages.map(\.messageID), ["m1499", "m1498"])
            XCTAssertEqual(page.messages.first?.plaintext.bytes, Array("message 1499".utf8))
            let bobStatus = try await restored.status(forUser: "bob")
            XCTAssertEqual(bobStatus, .verified)
        }
    }

    // MARK: - Bounded memory

    func testAHundredThousandMessagesStreamThroughInPagesAndBatches() async throws {
        let count = 100_000
        let store = try await makeSource(messageCount: count)
        let code = try AgeX25519Identity()
        let (folder, path, report) = try await export(store, to: code)
        XCTAssertEqual(report.messageCount, count)
        // The writer held one page of messages at a time.
        XCTAssertEqual(report.largestPageCount, SQLiteProtocolStore.exportPageSize)
        let target = folder.appendingPathComponent("restored.sqlite").path
        let key = StorageKey.generate()
        let restored = try await SQLiteProtocolStore.restoreAccount(
            from: path, identities: [code], to: target, storageKey: key, options: SQLiteStoreOptions(durability: .processCrash))
        XCTAssertEqual(restored.importedMessageCount, count)
        // The reader held one batch of items and one line at a time: a few hundred items and
        // the longest line (about 120 bytes), not the file's 10 MB.
        XCTAssertEqual(restored.largestBatchCount, SQLiteProtocolStore.restoreBatchSize)
        XCTAssertLessThan(restored.largestLineByteCount, 300)
        let fileSize = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertGreaterThan(fileSize, 100 * restored.largestLineByteCount * SQLiteProtocolStore.restoreBatchSize)
        // Every message arrived: the count in the file, and the oldest and newest pages.
        let rows = try withRawDatabase(target) { try Int.fetchOne($0, sql: "SELECT count(*) FROM archive") }
        XCTAssertEqual(rows, count)
        let newStore = try SQLiteProtocolStore(path: target, storageKey: key)
        let newest = try await newStore.archivedMessages(inConversation: "bob", limit: 1)
        XCTAssertEqual(newest.messages.first?.messageID, "m\(count - 1)")
        let oldest = try await newStore.archivedMessages(inConversation: "bob", limit: 1, before: ArchiveCursor(before: 1))
        XCTAssertEqual(oldest.messages.first?.plaintext.bytes, Array("message 0".utf8))
    }
}
