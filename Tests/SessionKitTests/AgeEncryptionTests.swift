import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// age v1 encryption and decryption through the public API: recipients and identities, the
/// whole-file, stream and file-to-file forms, binary and armored.
final class AgeEncryptionTests: XCTestCase {
    /// A fast work factor for tests (2^10: 1 MiB, milliseconds).
    static let testWorkFactor = 10

    private func content(_ count: Int, seed: UInt64 = 1) -> Data {
        var generator = SplitMix64(seed: seed)
        return Data((0 ..< count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    private func assertAgeError(_ expected: AgeError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? AgeError, expected, file: file, line: line)
        }
    }

    private func assertCategory(_ category: String, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let error = error as? AgeError else { return XCTFail("not an AgeError: \(error)", file: file, line: line) }
            let actual: String
            switch error {
            case .header: actual = "header"
            case .noMatch: actual = "noMatch"
            case .headerMAC: actual = "headerMAC"
            case .payload: actual = "payload"
            case .armor: actual = "armor"
            default: actual = "\(error)"
            }
            XCTAssertEqual(actual, category, "\(error)", file: file, line: line)
        }
    }

    func testX25519RoundTripsAtChunkBoundariesBinaryAndArmored() throws {
        let identity = try AgeX25519Identity()
        for armored in [false, true] {
            let encryptor = AgeEncryptor(recipients: [identity.recipient], armored: armored)
            for count in [0, 1, 47, 48, 65535, 65536, 65537, 2 * 65536, 3 * 65536 + 17] {
                let plaintext = content(count, seed: UInt64(count))
                let file = try encryptor.encrypt(plaintext)
                XCTAssertEqual(try AgeDecryptor(identities: [identity]).decrypt(file), plaintext, "\(count) bytes, armored \(armored)")
                let format: AgeInputFormat = armored ? .armored : .binary
                XCTAssertEqual(try AgeDecryptor(identities: [identity], format: format).decrypt(file), plaintext)
                // The file's length is the header, the nonce and one tag per chunk (binary).
                if !armored {
                    let chunks = count == 0 ? 1 : (count + 65535) / 65536
                    let header = try XCTUnwrap(file.range(of: Data("\n--- ".utf8))).upperBound + 44
                    XCTAssertEqual(file.count, header + 16 + count + 16 * chunks)
                } else {
                    XCTAssertTrue(file.starts(with: Data("-----BEGIN AGE ENCRYPTED FILE-----\n".utf8)))
                    XCTAssertTrue(file.suffix(33) == Data("-----END AGE ENCRYPTED FILE-----\n".utf8))
                    // The wrong format is refused: armor read as binary is a header failure,
                    // binary read as armor an armor failure.
                    assertCategory("header") { _ = try AgeDecryptor(identities: [identity], format: .binary).decrypt(file) }
                }
            }
        }
        let binary = try AgeEncryptor(recipients: [identity.recipient]).encrypt(Data("x".utf8))
        assertCategory("armor") { _ = try AgeDecryptor(identities: [identity], format: .armored).decrypt(binary) }
    }

    func testEachRecipientOfAFileCanDecryptIt() throws {
        let identities = try (0 ..< 3).map { _ in try AgeX25519Identity() }
        let plaintext = content(1000)
        let file = try AgeEncryptor(recipients: identities.map(\.recipient)).encrypt(plaintext)
        for identity in identities {
            XCTAssertEqual(try AgeDecryptor(identities: [identity]).decrypt(file), plaintext)
        }
        assertAgeError(.noMatch) { _ = try AgeDecryptor(identities: [try AgeX25519Identity()]).decrypt(file) }
        assertAgeError(.noMatch) { _ = try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: "x")]).decrypt(file) }
        assertAgeError(.noMatch) { _ = try AgeDecryptor(identities: []).decrypt(file) }
        // The identities are tried in order: a wrong one first does not matter.
        XCTAssertEqual(try AgeDecryptor(identities: [try AgeX25519Identity(), identities[2]]).decrypt(file), plaintext)
        // Two files of the same plaintext differ (new file key, ephemeral key and nonce).
        XCTAssertNotEqual(try AgeEncryptor(recipients: [identities[0].recipient]).encrypt(plaintext),
                          try AgeEncryptor(recipients: [identities[0].recipient]).encrypt(plaintext))
    }

    func testScryptRoundTripAndItsRules() throws {
        let recipient = try AgeScryptRecipient(passphrase: "correct horse", workFactor: Self.testWorkFactor)
        let plaintext = content(70000)
        let file = try AgeEncryptor(recipients: [recipient]).encrypt(plaintext)
        let header = String(decoding: file.prefix(200), as: UTF8.self)
        XCTAssertTrue(header.contains("\n-> scrypt ") && header.contains(" 10\n"), header)
        XCTAssertEqual(try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: "correct horse")]).decrypt(file), plaintext)
        assertAgeError(.noMatch) { _ = try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: "correct horse!")]).decrypt(file) }
        assertAgeError(.noMatch) { _ = try AgeDecryptor(identities: [try AgeX25519Identity()]).decrypt(file) }
        // A work factor above the identity's limit is a resource-limit error, before any scrypt work.
        assertAgeError(.resourceLimit(.scryptWorkFactor(found: Self.testWorkFactor, maximum: 9))) {
            _ = try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: "correct horse", maximumWorkFactor: 9)]).decrypt(file)
        }
        // An scrypt recipient must be alone (age.md).
        assertAgeError(.invalidRecipient("an scrypt recipient must be the only recipient")) {
            _ = try AgeEncryptor(recipients: [recipient, try AgeX25519Identity().recipient]).encrypt(plaintext)
        }
        XCTAssertThrowsError(try AgeEncryptor(recipients: [recipient, recipient]).encrypt(plaintext))
        XCTAssertThrowsError(try AgeEncryptor(recipients: []).encrypt(plaintext))
        XCTAssertThrowsError(try AgeScryptRecipient(passphrase: ""))
        XCTAssertThrowsError(try AgeScryptRecipient(passphrase: "x", workFactor: 0))
        XCTAssertThrowsError(try AgeScryptRecipient(passphrase: "x", workFactor: 31))
        XCTAssertThrowsError(try AgeScryptIdentity(passphrase: "x", maximumWorkFactor: 31))
    }

    /// A header with an scrypt stanza next to another stanza is refused by every identity,
    /// even one that could unwrap the other stanza (CCTV's scrypt_and_x25519 reading).
    func testAnScryptStanzaNextToAnotherIsAHeaderFailureWhateverTheIdentity() throws {
        let identity = try AgeX25519Identity()
        let fileKey = AgeFileKey()
        let scrypt = try AgeScryptRecipient(passphrase: "pw", workFactor: Self.testWorkFactor).wrap(fileKey)
        let x25519 = try identity.recipient.wrap(fileKey)
        for stanzas in [x25519 + scrypt, scrypt + x25519, scrypt + scrypt] {
            var file = try AgeHeader.encode(stanzas, fileKey: fileKey)
            let stream = try AgeEncryptor(recipients: [identity.recipient]).makeStream(fileKey: fileKey, nonce: [UInt8](repeating: 7, count: 16))
            let payload = try stream.finish()
            // Replace the stream's own header by the crafted one: keep its nonce and payload.
            let headerEnd = try XCTUnwrap(payload.range(of: Data("\n--- ".utf8))).upperBound + 44
            file += payload[headerEnd...]
            assertCategory("header") { _ = try AgeDecryptor(identities: [identity]).decrypt(Data(file)) }
            assertCategory("header") { _ = try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: "pw")]).decrypt(Data(file)) }
        }
    }

    func testStreamsGiveTheSameBytesWhateverThePieceSizes() throws {
        let identity = try AgeX25519Identity()
        let plaintext = content(5 * 65536 + 123, seed: 9)
        var generator = SplitMix64(seed: 3)
        for armored in [false, true] {
            let stream = try AgeEncryptor(recipients: [identity.recipient], armored: armored).makeStream()
            var file = Data()
            var offset = 0
            while offset < plaintext.count {
                let size = min(Int(generator.next() % 100_000), plaintext.count - offset)
                file += try stream.update(plaintext[offset ..< offset + size])
                offset += size
            }
            file += try stream.finish()
            XCTAssertThrowsError(try stream.finish())
            XCTAssertThrowsError(try stream.update(Data([1])))

            let decrypting = AgeDecryptor(identities: [identity]).makeStream()
            var released = Data()
            offset = 0
            while offset < file.count {
                let size = min(Int(generator.next() % 70_000), file.count - offset)
                try decrypting.update(file[offset ..< offset + size], release: { released += $0 })
                offset += size
            }
            try decrypting.finish(release: { released += $0 })
            XCTAssertEqual(released, plaintext)
            XCTAssertThrowsError(try decrypting.finish(release: { _ in }))
        }
    }

    func testFileToFileEncryptionAndDecryption() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("age-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let identity = try AgeX25519Identity()
        let plaintext = content(3 * 65536 + 5)
        let source = folder.appendingPathComponent("plain.bin")
        let encrypted = folder.appendingPathComponent("plain.bin.age")
        let decrypted = folder.appendingPathComponent("out.bin")
        try plaintext.write(to: source)
        try AgeEncryptor(recipients: [identity.recipient]).encrypt(contentsOf: source, to: encrypted)
        try AgeDecryptor(identities: [identity]).decrypt(contentsOf: encrypted, to: decrypted)
        XCTAssertEqual(try Data(contentsOf: decrypted), plaintext)

        // A damaged file leaves the destination as it was and no temporary file behind.
        var damaged = try Data(contentsOf: encrypted)
        damaged[damaged.count - 100] ^= 1
        try damaged.write(to: encrypted)
        try Data("previous".utf8).write(to: decrypted)
        assertCategory("payload") { try AgeDecryptor(identities: [identity]).decrypt(contentsOf: encrypted, to: decrypted) }
        XCTAssertEqual(try Data(contentsOf: decrypted), Data("previous".utf8))
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)), ["plain.bin", "plain.bin.age", "out.bin"])

        XCTAssertThrowsError(try AgeDecryptor(identities: [identity]).decrypt(contentsOf: folder.appendingPathComponent("missing"), to: decrypted)) {
            guard case .file = $0 as? AgeError else { return XCTFail("\($0)") }
        }
    }
}
