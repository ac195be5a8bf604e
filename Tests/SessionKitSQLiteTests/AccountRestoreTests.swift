import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import Verification
import XCTest

/// Restore's errors (nothing written) and its per-item report, on exports written by hand: the
/// plaintexts here are typed out, not produced by the exporter.
final class AccountRestoreTests: XCTestCase {
    private let seed = [UInt8](repeating: 7, count: 32)

    private var identityLine: String {
        get throws {
            let pair = try IdentityKeyPair(seed: seed)
            return #"{"kind":"identity","seed":"\#(Data(seed).base64EncodedString())","publicKey":"\#(Data(pair.publicKey.rawRepresentation).base64EncodedString())"}"#
        }
    }

    private let header = #"{"format": "sessionkit-export", "version": 1, "user": "alice", "created": 1764150000}"#

    private func key(_ byte: UInt8) -> String { Data(repeating: byte, count: 32).base64EncodedString() }

    /// `plaintext` in an age file for `code` in a new folder; returns the folder and the file.
    private func exportFile(_ plaintext: String, for code: AgeX25519Identity, armored: Bool = false) throws -> (URL, String) {
        let folder = try temporaryFolder()
        let file = folder.appendingPathComponent("export.age")
        try AgeEncryptor(recipients: [code.recipient], armored: armored).encrypt(Data(plaintext.utf8)).write(to: file)
        return (folder, file.path)
    }

    /// Restores `file` into `folder/restored.sqlite` and checks that it fails with `expected`
    /// and leaves nothing but the export in the folder.
    private func assertRefused(
        _ file: String, in folder: URL, identities: [any AgeIdentity], _ expected: AccountExportError,
        expecting expectedIdentity: Ed25519.PublicKey? = nil, line: UInt = #line
    ) async throws {
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let target = folder.appendingPathComponent("restored.sqlite").path
        do {
            _ = try await SQLiteProtocolStore.restoreAccount(
                from: file, identities: identities, to: target, storageKey: StorageKey.generate(), expectedIdentity: expectedIdentity)
            XCTFail("restored", line: line)
        } catch {
            XCTAssertEqual(error, expected, line: line)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), line: line)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), before, "nothing left behind", line: line)
    }

    // MARK: - Errors

    func testAWrongRecoveryCodeOrPassphraseIsWrongKeyAndWritesNothing() async throws {
        let code = try AgeX25519Identity()
        let (folder, file) = try exportFile(header + "\n" + (try identityLine) + "\n", for: code)
        try await assertRefused(file, in: folder, identities: [try AgeX25519Identity()], .wrongKey)

        let passphraseFile = folder.appendingPathComponent("p.age")
        let recipient = try AgeScryptRecipient(passphrase: "right one", workFactor: 16)
        try AgeEncryptor(recipients: [recipient]).encrypt(Data((header + "\n" + (try identityLine) + "\n").utf8)).write(to: passphraseFile)
        try await assertRefused(passphraseFile.path, in: folder, identities: [try AgeScryptIdentity(passphrase: "wrong one")], .wrongKey)
        // A passphrase file read with a recovery code: no stanza for it.
        try await assertRefused(passphraseFile.path, in: folder, identities: [code], .wrongKey)
    }

    func testADamagedFileIsDamagedAndWritesNothingEvenWhenItemsWereImportedBeforeTheDamage() async throws {
        let code = try AgeX25519Identity()
        // Enough messages for several 64 KiB chunks: the store is being built when the damage
        // shows.
        var lines = [header, try identityLine]
        for index in 0 ..< 3000 {
            lines.append(#"{"kind":"message","conversation":"c","id":"m\#(index)","timestamp":\#(index),"body":"\#(key(UInt8(index % 256)))"}"#)
        }
        let (folder, file) = try exportFile(lines.joined(separator: "\n") + "\n", for: code)
        let original = try Data(contentsOf: URL(fileURLWithPath: file))
        XCTAssertGreaterThan(original.count, 3 * 65536)
        let damaged = folder.appendingPathComponent("damaged.age")
        let macOffset = try XCTUnwrap(original.range(of: Data("\n--- ".utf8))).upperBound + 3
        for (what, bytes) in [
            ("a flipped byte in the last chunk", { var d = original; d[d.count - 20] ^= 1; return d }()),
            ("a flipped byte in the second chunk", { var d = original; d[70_000] ^= 0x80; return d }()),
            // (A changed recipient stanza reads as no match, `wrongKey`: age cannot tell it from
            // a stanza for another key. The MAC line can be told.)
            ("a changed header MAC", { var d = original; d[macOffset] = d[macOffset] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A"); return d }()),
            ("truncated at a chunk boundary", original.prefix(original.count - (original.count - 200) % 65552)),
            ("the last byte cut", original.dropLast()),
            ("data after the end", original + Data([0])),
        ] {
            try bytes.write(to: damaged)
            let target = folder.appendingPathComponent("restored.sqlite").path
            do {
                _ = try await SQLiteProtocolStore.restoreAccount(from: damaged.path, identities: [code], to: target, storageKey: StorageKey.generate())
                XCTFail("\(what): restored")
            } catch {
                guard case .damaged = error else { return XCTFail("\(what): \(error)") }
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), ["damaged.age", "export.age"], what)
        }
        // The intact file restores.
        let target = folder.appendingPathComponent("restored.sqlite").path
        let report = try await SQLiteProtocolStore.restoreAccount(from: file, identities: [code], to: target, storageKey: StorageKey.generate())
        XCTAssertEqual(report.importedMessageCount, 3000)
    }

    func testAnUnknownFormatAHigherVersionOrABadHeaderIsRefusedAndWritesNothing() async throws {
        let code = try AgeX25519Identity()
        let identity = try identityLine
        let cases: [(String, AccountExportError)] = [
            (#"{"format":"other-export","version":1,"user":"alice","created":1}"#, .unknownFormat("other-export")),
            (#"{"format":"other-export","version":"x"}"#, .unknownFormat("other-export")),
            (#"{"format":"sessionkit-export","version":2,"user":"alice","created":1}"#, .unsupportedVersion(2)),
            (#"{"format":"sessionkit-export","version":99,"user":"alice","created":1,"extra":[]}"#, .unsupportedVersion(99)),
            (#"{"format":"sessionkit-export","version":0,"user":"alice","created":1}"#, .damaged("the header version 0 is not a version")),
            (#"{"format":"sessionkit-export","version":"1","user":"alice","created":1}"#,
             .damaged("the header lacks an integer version, a string user or an integer created")),
            (#"{"format":"sessionkit-export","version":1,"created":1}"#,
             .damaged("the header lacks an integer version, a string user or an integer created")),
            (#"{"version":1,"user":"alice","created":1}"#, .damaged("the header has no format")),
            (#"["sessionkit-export",1]"#, .damaged("the first line is not a JSON object")),
            ("", .damaged("the first line is not a JSON object")),
        ]
        for (headerLine, expected) in cases {
            let (folder, file) = try exportFile(headerLine + "\n" + identity + "\n", for: code)
            try await assertRefused(file, in: folder, identities: [code], expected)
        }
        let (folder, file) = try exportFile("", for: code)
        try await assertRefused(file, in: folder, identities: [code], .damaged("the export is empty"))
    }

    func testAnExportWhoseFirstItemIsNotAUsableIdentityIsRefused() async throws {
        let code = try AgeX25519Identity()
        let pair = try IdentityKeyPair(seed: seed)
        let wrongPublic = #"{"kind":"identity","seed":"\#(Data(seed).base64EncodedString())","publicKey":"\#(key(1))"}"#
        let cases: [(String, AccountExportError)] = [
            (header + "\n", .identity("the export holds no identity")),
            (header + "\n" + #"{"kind":"trust","user":"bob","status":"trusted","identityKey":"\#(key(0xb0))","devices":[1],"supersededIdentityKeys":[]}"#,
             .identity("the first item is a trust, not the identity")),
            (header + "\n" + wrongPublic + "\n", .identity("the public key does not belong to the seed")),
            (header + "\n" + #"{"kind":"identity","seed":"AAAA","publicKey":"\#(Data(pair.publicKey.rawRepresentation).base64EncodedString())"}"#,
             .identity("line 2 is not an identity (the seed is not base64 of 32 bytes)")),
        ]
        for (plaintext, expected) in cases {
            let (folder, file) = try exportFile(plaintext, for: code)
            try await assertRefused(file, in: folder, identities: [code], expected)
        }
    }

    func testAnExistingTargetIsRefusedAndLeftAsItWas() async throws {
        let code = try AgeX25519Identity()
        let (folder, file) = try exportFile(header + "\n" + (try identityLine) + "\n", for: code)
        for name in ["restored.sqlite", "restored.sqlite-wal"] {
            let existing = folder.appendingPathComponent(name)
            try Data("keep me".utf8).write(to: existing)
            do {
                _ = try await SQLiteProtocolStore.restoreAccount(
                    from: file, identities: [code], to: folder.appendingPathComponent("restored.sqlite").path, storageKey: StorageKey.generate())
                XCTFail("restored over \(name)")
            } catch {
                XCTAssertEqual(error, .targetExists(path: existing.path))
            }
            XCTAssertEqual(try Data(contentsOf: existing), Data("keep me".utf8))
            try FileManager.default.removeItem(at: existing)
        }
    }

    // MARK: - The per-item report

    func testItemsThatCannotBeImportedAreSkippedOneByOneWithTheirReason() async throws {
        let code = try AgeX25519Identity()
        let lines = [
            header,                                                                                        // 1
            try identityLine,                                                                              // 2
            #"{"kind":"contact","name":"a future kind"}"#,                                                 // 3
            #"{"kind":"trust","user":"bob","status":"friend","identityKey":"\#(key(0xb0))","devices":[1],"supersededIdentityKeys":[]}"#, // 4
            #"{"kind":"trust","user":"bob","status":"verified","identityKey":"\#(key(0xb0))","previousIdentityKey":"\#(key(0xb1))","devices":[1,2],"supersededIdentityKeys":["\#(key(0xb2))"]}"#, // 5
            #"{"kind":"trust","user":"bob","status":"trusted","identityKey":"\#(key(0xb0))","devices":[1],"supersededIdentityKeys":[]}"#, // 6
            #"{"kind":"message","conversation":"bob","id":"m1","timestamp":5,"body":"aGk="}"#,           // 7
            #"{"kind":"message","conversation":"bob","id":"m1","timestamp":6,"body":"aGkh"}"#,           // 8
            try identityLine,                                                                              // 9
            "",                                                                                            // 10
            "[1,2]",                                                                                       // 11
            #"{"kind":"message","conversation":"bob","id":"m2","timestamp":5,"body":"not base64!"}"#,    // 12
            #"{"kind":"message","conversation":"bob","id":"m3","timestamp":"5","body":"aGk="}"#,         // 13
            #"{"kind":"trust","user":"","status":"trusted","identityKey":"\#(key(0xc0))","devices":[],"supersededIdentityKeys":[]}"#, // 14
            #"{"kind":"message","conversation":"","id":"m4","timestamp":5,"body":""}"#,                  // 15
            #"{"kind":"message","conversation":"carol","id":"m1","timestamp":-1,"body":""}"#,           // 16, no LF
        ]
        let (folder, file) = try exportFile(lines.joined(separator: "\n"), for: code)
        let target = folder.appendingPathComponent("restored.sqlite").path
        let storageKey = StorageKey.generate()
        let report = try await SQLiteProtocolStore.restoreAccount(
            from: file, identities: [code], to: target, storageKey: storageKey, expectedIdentity: try IdentityKeyPair(seed: seed).publicKey)
        XCTAssertTrue(report.isAuthenticated, "the expected identity's seed is in the file")
        XCTAssertEqual(report.importedTrustRecordCount, 1)
        XCTAssertEqual(report.importedMessageCount, 2)
        XCTAssertEqual(report.skipped, [
            AccountRestoreSkippedItem(line: 3, kind: "contact", reason: "unknown kind"),
            AccountRestoreSkippedItem(line: 4, kind: "trust", reason: "unknown status friend"),
            AccountRestoreSkippedItem(line: 6, kind: "trust", reason: "a second trust record for the same user"),
            AccountRestoreSkippedItem(line: 8, kind: "message", reason: "a second message with the same id in its conversation"),
            AccountRestoreSkippedItem(line: 9, kind: "identity", reason: "a second identity (the first one was restored)"),
            AccountRestoreSkippedItem(line: 10, kind: nil, reason: "not a JSON object with a string kind"),
            AccountRestoreSkippedItem(line: 11, kind: nil, reason: "not a JSON object with a string kind"),
            AccountRestoreSkippedItem(line: 12, kind: "message", reason: "the body is not base64"),
            AccountRestoreSkippedItem(line: 13, kind: "message", reason: "a message needs conversation, id, an integer timestamp and body"),
            AccountRestoreSkippedItem(line: 14, kind: "trust", reason: "the user id is not 1 to 255 UTF-8 bytes"),
            AccountRestoreSkippedItem(line: 15, kind: "message", reason: "the conversation id is empty"),
        ])
        let store = try SQLiteProtocolStore(path: target, storageKey: storageKey)
        let bob = try await store.record(forUser: "bob")
        XCTAssertEqual(bob, TrustRecord(
            identityKey: identityKey(0xb0), status: .verified, previousIdentityKey: identityKey(0xb1), devices: [1, 2],
            supersededIdentityKeys: [identityKey(0xb2)]))
        let page = try await store.archivedMessages(inConversation: "bob", limit: 10)
        XCTAssertEqual(page.messages.map(\.messageID), ["m1"])
        XCTAssertEqual(page.messages.first?.plaintext.bytes, Array("hi".utf8), "the first of two messages with one id is kept")
        XCTAssertEqual(page.messages.first?.timestamp, 5)
        let carol = try await store.archivedMessages(inConversation: "carol", limit: 10)
        XCTAssertEqual(carol.messages.map(\.timestamp), [-1], "a last line without LF is read")
        XCTAssertEqual(carol.messages.first?.plaintext.count, 0)
    }

    // MARK: - Who made the file

    /// The review's finding: anyone who knows the recovery code's recipient (not the code) can
    /// write an export the code opens, with an identity of their choosing and contacts marked
    /// verified under keys of their choosing. Restored as it is, the attacker's key for "bob"
    /// would show as verified. Now such a file restores no verification, and a restore that
    /// names the account's identity refuses it.
    func testAnExportWrittenToTheRecipientByAnyoneElseRestoresNoVerification() async throws {
        let code = try AgeX25519Identity()
        let attackerSeed = [UInt8](repeating: 9, count: 32)
        let attacker = try IdentityKeyPair(seed: attackerSeed)
        let forgedIdentity = #"{"kind":"identity","seed":"\#(Data(attackerSeed).base64EncodedString())","publicKey":"\#(Data(attacker.publicKey.rawRepresentation).base64EncodedString())"}"#
        let bob = #"{"kind":"trust","user":"bob","status":"verified","identityKey":"\#(key(0xee))","devices":[1],"supersededIdentityKeys":[]}"#
        let (folder, file) = try exportFile([header, forgedIdentity, bob].joined(separator: "\n") + "\n", for: code)

        let target = folder.appendingPathComponent("restored.sqlite").path
        let storageKey = StorageKey.generate()
        let report = try await SQLiteProtocolStore.restoreAccount(from: file, identities: [code], to: target, storageKey: storageKey)
        XCTAssertFalse(report.isAuthenticated)
        XCTAssertEqual(report.unverifiedContactCount, 1)
        let store = try SQLiteProtocolStore(path: target, storageKey: storageKey)
        let restored = try await store.record(forUser: "bob")
        try store.close()
        XCTAssertEqual(restored?.status, .trusted, "never verified from a file anyone could have written")
        XCTAssertEqual(restored?.identityKey, identityKey(0xee))

        let account = try IdentityKeyPair(seed: seed).publicKey
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
        try await assertRefused(
            file, in: folder, identities: [code], .identity("the export holds another identity than the account's"), expecting: account)
    }

    /// A passphrase export is authenticated (only the passphrase's holder can write a file it
    /// opens): its verifications are restored.
    func testAPassphraseExportRestoresItsVerifications() async throws {
        let folder = try temporaryFolder()
        let file = folder.appendingPathComponent("p.age")
        let bob = #"{"kind":"trust","user":"bob","status":"verified","identityKey":"\#(key(0xee))","devices":[1],"supersededIdentityKeys":[]}"#
        let plaintext = [header, try identityLine, bob].joined(separator: "\n") + "\n"
        try AgeEncryptor(recipients: [try AgeScryptRecipient(passphrase: "only I know", workFactor: 16)]).encrypt(Data(plaintext.utf8))
            .write(to: file)
        let target = folder.appendingPathComponent("restored.sqlite").path
        let storageKey = StorageKey.generate()
        let report = try await SQLiteProtocolStore.restoreAccount(
            from: file.path, identities: [try AgeScryptIdentity(passphrase: "only I know")], to: target, storageKey: storageKey)
        XCTAssertTrue(report.isAuthenticated)
        XCTAssertEqual(report.unverifiedContactCount, 0)
        let store = try SQLiteProtocolStore(path: target, storageKey: storageKey)
        defer { try? store.close() }
        let restored = try await store.record(forUser: "bob")
        XCTAssertEqual(restored?.status, .verified)
    }

    func testALineLongerThanTheLimitIsSkippedWithoutBeingHeld() throws {
        var reader = ExportLineReader(maximumLineByteCount: 100)
        let text = header + "\n" + (try identityLine) + "\n" + String(repeating: "x", count: 1000) + "\n{}\n"
        for chunk in Array(text.utf8).chunked(into: 7) {
            try chunk.withUnsafeBytes { try reader.update($0) }
        }
        try reader.finish()
        let events = reader.takeEvents()
        XCTAssertEqual(events.count, 4)
        guard case let .skipped(line, kind, reason) = events[2] else { return XCTFail("\(events[2])") }
        XCTAssertEqual(line, 3)
        XCTAssertNil(kind)
        XCTAssertEqual(reason, "the line is longer than 100 bytes")
        guard case .skipped(4, nil, "not a JSON object with a string kind") = events[3] else { return XCTFail("\(events[3])") }
        XCTAssertLessThanOrEqual(reader.largestLineByteCount, 100)
    }
}

extension Array {
    /// The array in pieces of `size` (the last may be shorter).
    func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0 ..< Swift.min($0 + size, count)]) }
    }
}
