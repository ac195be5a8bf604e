import Foundation
import SessionKit
import TestSupport
import XCTest

/// The samples of the "Attachments and age Files" article (SessionKit.docc/Attachments.md), of
/// SessionKitAge's landing page (SessionKitAge.docc/SessionKitAge.md) and of the README's
/// section, compiled and run as an app would write them (no `@testable`; the age types through
/// SessionKit's re-export of SessionKitAge, as an app that imports only SessionKit sees them).
/// Each sample sits between `// --- <file>, "<section>" ---` and `// --- end ---`; the first
/// test checks that the documents show exactly those lines.
final class AttachmentsDocumentationTests: XCTestCase {
    func testTheDocumentsShowTheLinesTheseTestsRun() throws {
        let documents = [
            "Attachments.md": try PackageDocuments.text("Sources/SessionKit/SessionKit.docc/Attachments.md"),
            "SessionKitAge.md": try PackageDocuments.text("Sources/SessionKitAge/SessionKitAge.docc/SessionKitAge.md"),
            "README.md": try PackageDocuments.text("README.md"),
        ].mapValues(Self.significantLines)
        let lines = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var checked = 0
        var index = 0
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            index += 1
            guard line.hasPrefix("// --- "), line.hasSuffix(" ---"), line != "// --- end ---",
                  let comma = line.range(of: ".md, ") else { continue }
            let name = String(line[line.index(line.startIndex, offsetBy: 7) ..< comma.lowerBound]) + ".md"
            var sample: [String] = []
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "// --- end ---" {
                sample.append(lines[index])
                index += 1
            }
            let shown = Self.significantLines(sample.joined(separator: "\n"))
            let text = try XCTUnwrap(documents[name], name)
            let found = !shown.isEmpty && (0 ... max(0, text.count - shown.count)).contains { start in
                Array(text[start ..< min(text.count, start + shown.count)]) == shown
            }
            XCTAssertTrue(found, "\(line) is not in \(name) as it runs here")
            checked += 1
        }
        XCTAssertEqual(checked, 6)
    }

    private static func significantLines(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func testSendingAndReceivingAnAttachment() throws {
        let photo = Data((0 ..< 100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var storage: [String: Data] = [:]   // the app's upload server
        let name = "photo-1"
        // --- Attachments.md, "Send and receive" ---
        // The sender: one encryption, whoever receives it.
        let encrypted = try Attachment.encrypt(photo)
        storage[name] = encrypted.ciphertext                 // upload: the server sees the padded length only
        let pointerBytes = encrypted.pointer.serialized()    // 57 bytes with the key: send them in a message

        // A receiver, with the pointer from the message and the downloaded ciphertext:
        let pointer = try AttachmentPointer(serialized: pointerBytes)
        let received = try Attachment.decrypt(storage[name] ?? Data(), pointer: pointer)
        // --- end ---
        XCTAssertEqual(received, photo)
        XCTAssertEqual(storage[name]?.count, Int(try pointer.ciphertextLength()))
    }

    func testFilesStreamsAndRanges() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("attachments-doc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let video = Data((0 ..< 300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let videoURL = folder.appendingPathComponent("video.mp4")
        let uploadURL = folder.appendingPathComponent("upload.bin")
        let savedURL = folder.appendingPathComponent("saved.mp4")
        try video.write(to: videoURL)
        // --- Attachments.md, "Files" ---
        let pointer = try Attachment.encrypt(contentsOf: videoURL, to: uploadURL)
        // … upload uploadURL, send pointer.serialized() … the receiver downloads to downloadURL:
        let downloadURL = uploadURL
        try Attachment.decrypt(contentsOf: downloadURL, pointer: pointer, to: savedURL)
        // --- end ---
        XCTAssertEqual(try Data(contentsOf: savedURL), video)

        let ciphertext = try Data(contentsOf: downloadURL)
        let download = AsyncStream<Data> { continuation in
            for start in stride(from: 0, to: ciphertext.count, by: 16_384) {
                continuation.yield(ciphertext[start ..< min(start + 16_384, ciphertext.count)])
            }
            continuation.finish()
        }
        var played = Data()
        // --- Attachments.md, "Streaming" ---
        for try await piece in Attachment.decryptedChunks(of: download, pointer: pointer) {
            played.append(piece)   // authentic, but the whole file is confirmed only when the loop ends
        }
        // --- end ---
        XCTAssertEqual(played, video)

        // --- Attachments.md, "Seeking" ---
        let reader = try AttachmentReader(contentsOf: downloadURL, pointer: pointer)
        let frame = try reader.read(offset: 200_000, count: 4096)   // reads and checks the chunk holding it
        // --- end ---
        XCTAssertEqual(frame, video[200_000 ..< 204_096])
    }

    func testAgeFiles() throws {
        let backup = Data("account export".utf8)
        // --- SessionKitAge.md, "age files" ---
        let identity = try AgeX25519Identity()       // identity.secretKeyString: AGE-SECRET-KEY-1…, a recovery code
        let file = try AgeEncryptor(recipients: [identity.recipient], armored: true).encrypt(backup)
        let restored = try AgeDecryptor(identities: [identity]).decrypt(file)

        let passphrase = try AgeScryptRecipient(passphrase: "correct horse battery staple")   // work factor 2^18
        let locked = try AgeEncryptor(recipients: [passphrase]).encrypt(backup)
        let unlocked = try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: "correct horse battery staple")]).decrypt(locked)
        // --- end ---
        XCTAssertEqual(restored, backup)
        XCTAssertEqual(unlocked, backup)
        XCTAssertTrue(identity.secretKeyString.hasPrefix("AGE-SECRET-KEY-1"))
    }

    func testTheReadmeExample() throws {
        let photo = Data("a photo".utf8)
        // --- README.md, "Attachments and age files" ---
        let encrypted = try Attachment.encrypt(photo)                 // any size; Data, a file or an AsyncSequence
        let upload = encrypted.ciphertext                              // to any server: it learns only the padded length
        let pointer = encrypted.pointer.serialized()                   // 57 bytes: send them inside a message
        let opened = try Attachment.decrypt(upload, pointer: try AttachmentPointer(serialized: pointer))
        // --- end ---
        XCTAssertEqual(opened, photo)
    }
}
