import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// SPEC §10 attachments: padded(n), the 57-byte pointer, and every way to encrypt and decrypt
/// (Data, files, async sequences, random access), with what each releases.
final class AttachmentTests: XCTestCase {
    static let chunk = 65536
    static let sealedChunk = 65536 + 16

    static func content(_ count: Int, seed: UInt64 = 7) -> Data {
        var generator = SplitMix64(seed: seed &+ UInt64(count))
        return Data((0 ..< count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    static func temporaryFolder(_ testCase: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("attachment-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        testCase.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    func assertInvalidMessage(_ message: String = "", file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), message, file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage, message, file: file, line: line)
        }
    }

    /// padded(n) at SPEC §10's first steps (512, 512 + 25, 537 + 26) and at the overflow.
    func testPaddedLength() throws {
        let expected: [(UInt64, UInt64)] = [(0, 512), (1, 512), (512, 512), (513, 537), (537, 537), (538, 563), (563, 563), (564, 591)]
        for (n, padded) in expected {
            XCTAssertEqual(try Attachment.paddedLength(forContentLength: n), padded, "padded(\(n))")
        }
        // Every bucket is about 5 % above the previous one, and a bucket pads to itself.
        var previous: UInt64 = 512
        for n in stride(from: UInt64(600), to: 10_000_000, by: 99_991) {
            let padded = try Attachment.paddedLength(forContentLength: n)
            XCTAssertGreaterThanOrEqual(padded, n)
            XCTAssertLessThanOrEqual(padded - n, n / 20 + 1)
            XCTAssertEqual(try Attachment.paddedLength(forContentLength: padded), padded)
            XCTAssertGreaterThanOrEqual(padded, previous)
            previous = padded
        }
        XCTAssertThrowsError(try Attachment.paddedLength(forContentLength: .max)) { XCTAssertEqual($0 as? SessionError, .invalidMessage) }
        XCTAssertThrowsError(try Attachment.ciphertextLength(forContentLength: .max - 1000)) { XCTAssertEqual($0 as? SessionError, .invalidMessage) }
        // The ciphertext: nonce, padded content, one tag per chunk.
        XCTAssertEqual(try Attachment.ciphertextLength(forContentLength: 0), 16 + 512 + 16)
        XCTAssertEqual(try Attachment.ciphertextLength(forContentLength: 70000), 16 + 72797 + 2 * 16)
    }

    func testPointerEncoding() throws {
        let encrypted = try Attachment.encrypt(Self.content(1000))
        let bytes = encrypted.pointer.serialized()
        XCTAssertEqual(bytes.count, 57)
        XCTAssertEqual(bytes[0], 0x28)
        XCTAssertEqual(Array(bytes[17 ..< 49]), SHA256.hash([UInt8](encrypted.ciphertext)))
        XCTAssertEqual(Array(bytes[49...]), [0, 0, 0, 0, 0, 0, 0x03, 0xE8])
        XCTAssertEqual(try AttachmentPointer(serialized: bytes), encrypted.pointer)
        XCTAssertEqual(try AttachmentPointer(serialized: Data(bytes)), encrypted.pointer)
        let key = Hex.encode(Array(bytes[1 ..< 17]))
        XCTAssertFalse(encrypted.pointer.description.contains(key))
        XCTAssertFalse(String(reflecting: encrypted.pointer).contains(key))

        let cases: [([UInt8], SessionError)] = [
            ([], .invalidPayload), ([0x28], .invalidPayload), (Array(bytes.dropLast()), .invalidPayload), (bytes + [0], .invalidPayload),
            ([0x27] + bytes.dropFirst(), .unsupportedVersion), ([0x00], .unsupportedVersion), ([0x29] + bytes.dropFirst().dropLast(), .unsupportedVersion),
        ]
        for (input, error) in cases {
            XCTAssertThrowsError(try AttachmentPointer(serialized: input), "\(input.count) bytes") { XCTAssertEqual($0 as? SessionError, error) }
        }
        XCTAssertThrowsError(try AttachmentPointer(fileKey: AgeFileKey(), ciphertextDigest: [1, 2], contentLength: 1))
        // A pointer whose padded length cannot exist decodes, and decrypting with it fails.
        var huge = bytes
        for index in 49 ..< 57 { huge[index] = 0xFF }
        let hugePointer = try AttachmentPointer(serialized: huge)
        assertInvalidMessage { _ = try Attachment.decrypt(encrypted.ciphertext, pointer: hugePointer) }
        assertInvalidMessage { _ = try AttachmentReader(ciphertext: encrypted.ciphertext, pointer: hugePointer) }
    }

    func testDataRoundTripsReleaseExactlyTheContent() throws {
        for count in [0, 1, 511, 512, 513, Self.chunk - 1, Self.chunk, Self.chunk + 1, 3 * Self.chunk + 17] {
            let content = Self.content(count)
            let encrypted = try Attachment.encrypt(content)
            XCTAssertEqual(UInt64(encrypted.ciphertext.count), try Attachment.ciphertextLength(forContentLength: UInt64(count)))
            XCTAssertEqual(encrypted.pointer.contentLength, UInt64(count))
            XCTAssertEqual(try Attachment.decrypt(encrypted.ciphertext, pointer: encrypted.pointer), content, "\(count) bytes")
            // Another encryption of the same content has another key and nonce.
            XCTAssertNotEqual(try Attachment.encrypt(content).ciphertext, encrypted.ciphertext)
        }
    }

    /// The ciphertext is an age v1 payload: with the pointer's key it decrypts as one, and the
    /// padding bytes are zeros.
    func testTheCiphertextIsAnAgePayloadOfTheZeroPaddedContent() throws {
        let content = Self.content(70000)
        let encrypted = try Attachment.encrypt(content)
        var decoder = AgePayloadDecoder(cipher: try AgePayloadCipher(fileKey: encrypted.pointer.fileKey, nonce: [UInt8](encrypted.ciphertext.prefix(16))))
        var padded: [UInt8] = []
        try encrypted.ciphertext.dropFirst(16).withBytes { (b: UnsafeRawBufferPointer) throws(AgeError) in try decoder.update(b) { padded += $0 } }
        try decoder.finish { padded += $0 }
        XCTAssertEqual(padded.count, 72797)   // padded(70000), computed with Python
        XCTAssertEqual(Data(padded.prefix(70000)), content)
        XCTAssertTrue(padded.dropFirst(70000).allSatisfy { $0 == 0 })
    }

    func testFileRoundTripAndFailuresLeaveTheDestinationAlone() throws {
        let folder = try Self.temporaryFolder(self)
        let content = Self.content(3 * Self.chunk + 5)
        let source = folder.appendingPathComponent("photo.jpg")
        let encryptedURL = folder.appendingPathComponent("upload.bin")
        let output = folder.appendingPathComponent("received.jpg")
        try content.write(to: source)
        let pointer = try Attachment.encrypt(contentsOf: source, to: encryptedURL)
        try Attachment.decrypt(contentsOf: encryptedURL, pointer: pointer, to: output)
        XCTAssertEqual(try Data(contentsOf: output), content)
        XCTAssertEqual(try Attachment.decrypt(try Data(contentsOf: encryptedURL), pointer: pointer), content)

        let ciphertext = try Data(contentsOf: encryptedURL)
        try Data("old".utf8).write(to: output)
        let damaged: [(String, Data)] = [
            ("flipped tag", { var d = ciphertext; d[d.count - 1] ^= 1; return d }()),
            ("truncated", ciphertext.dropLast(1)),
            ("extended", ciphertext + Data([0])),
        ]
        for (name, bytes) in damaged {
            try bytes.write(to: encryptedURL)
            assertInvalidMessage(name) { try Attachment.decrypt(contentsOf: encryptedURL, pointer: pointer, to: output) }
            XCTAssertEqual(try Data(contentsOf: output), Data("old".utf8), name)
        }
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)), ["photo.jpg", "upload.bin", "received.jpg"])
        XCTAssertThrowsError(try Attachment.decrypt(contentsOf: folder.appendingPathComponent("none"), pointer: pointer, to: output)) {
            guard case .file = $0 as? SessionError else { return XCTFail("\($0)") }
        }
    }

    private func stream(_ data: Data, pieces: [Int]) -> AsyncStream<Data> {
        AsyncStream { continuation in
            var offset = 0
            var index = 0
            while offset < data.count {
                let size = max(1, min(pieces[index % pieces.count], data.count - offset))
                continuation.yield(data[offset ..< offset + size])
                offset += size
                index += 1
            }
            continuation.finish()
        }
    }

    func testAsyncSequencesInAndOut() async throws {
        let folder = try Self.temporaryFolder(self)
        let content = Self.content(4 * Self.chunk + 1234)
        let destination = folder.appendingPathComponent("out.bin")
        let pointer = try await Attachment.encrypt(stream(content, pieces: [1, 70000, 4096, 100_000]), to: destination)
        let ciphertext = try Data(contentsOf: destination)
        XCTAssertEqual(try Attachment.decrypt(ciphertext, pointer: pointer), content)

        var uploaded = Data()
        let streamedPointer = try await Attachment.encrypt(stream(content, pieces: [65536, 3])) { uploaded += $0 }
        XCTAssertEqual(try Attachment.decrypt(uploaded, pointer: streamedPointer), content)
        uploaded = Data()
        let empty = try await Attachment.encrypt(stream(Data(), pieces: [1])) { uploaded += $0 }
        XCTAssertEqual(try Attachment.decrypt(uploaded, pointer: empty), Data())

        var released = Data()
        for try await piece in Attachment.decryptedChunks(of: stream(ciphertext, pieces: [1000, 65552, 7]), pointer: pointer) {
            XCTAssertFalse(piece.isEmpty)
            released += piece
        }
        XCTAssertEqual(released, content)
    }

    /// The async sequence releases verified chunks before the digest is known: a damaged
    /// chunk stops it after the chunks before; a wrong digest fails only at the end.
    func testTheAsyncSequenceReleasesVerifiedChunksThenFails() async throws {
        let content = Self.content(3 * Self.chunk + 10)
        let encrypted = try Attachment.encrypt(content)
        var flipped = encrypted.ciphertext
        flipped[16 + Self.sealedChunk + 100] ^= 1
        let cases: [(String, Data, AttachmentPointer, Int)] = [
            ("flipped byte in chunk 1", flipped, encrypted.pointer, Self.chunk),
            ("truncated before the final chunk", encrypted.ciphertext.prefix(16 + 3 * Self.sealedChunk), encrypted.pointer, 3 * Self.chunk),
            ("one byte more", encrypted.ciphertext + Data([0]), encrypted.pointer, 0),
            ("wrong digest", encrypted.ciphertext,
             try AttachmentPointer(fileKey: encrypted.pointer.fileKey, ciphertextDigest: [UInt8](repeating: 0, count: 32), contentLength: UInt64(content.count)),
             content.count),
        ]
        for (name, ciphertext, pointer, releasedCount) in cases {
            var released = Data()
            do {
                for try await piece in Attachment.decryptedChunks(of: stream(ciphertext, pieces: [Self.sealedChunk + 16 + 1]), pointer: pointer) {
                    released += piece
                }
                XCTFail("\(name): no error")
            } catch {
                XCTAssertEqual(error as? SessionError, .invalidMessage, name)
            }
            // "one byte more" arrives in the last piece: the pieces before it were released.
            if name != "one byte more" { XCTAssertEqual(released.count, releasedCount, name) }
            XCTAssertEqual(released, content.prefix(released.count), name)
        }
    }

    func testRandomAccessReadsAndVerifiesOnlyTheChunksItTouches() throws {
        let folder = try Self.temporaryFolder(self)
        let content = Self.content(3 * Self.chunk + 333)
        let encrypted = try Attachment.encrypt(content)
        let url = folder.appendingPathComponent("a.bin")
        try encrypted.ciphertext.write(to: url)
        for reader in [try AttachmentReader(contentsOf: url, pointer: encrypted.pointer),
                       try AttachmentReader(ciphertext: encrypted.ciphertext, pointer: encrypted.pointer)] {
            XCTAssertEqual(reader.contentLength, UInt64(content.count))
            for (offset, count) in [(0, 10), (Self.chunk - 5, 10), (0, content.count), (2 * Self.chunk + 7, Self.chunk), (content.count - 3, 100)] {
                XCTAssertEqual(try reader.read(offset: UInt64(offset), count: count), content[offset ..< min(offset + count, content.count)])
            }
            // Past the content (into the padding, or beyond) nothing is returned.
            XCTAssertEqual(try reader.read(offset: UInt64(content.count), count: 10), Data())
            XCTAssertEqual(try reader.read(offset: .max, count: 10), Data())
            XCTAssertEqual(try reader.read(offset: 0, count: 0), Data())
        }
        var damaged = encrypted.ciphertext
        damaged[16 + Self.sealedChunk + 5] ^= 1
        let reader = try AttachmentReader(ciphertext: damaged, pointer: encrypted.pointer)
        XCTAssertEqual(try reader.read(offset: 0, count: 100), content.prefix(100))
        assertInvalidMessage { _ = try reader.read(offset: UInt64(Self.chunk) + 1, count: 1) }
        assertInvalidMessage { _ = try reader.read(offset: UInt64(Self.chunk) - 1, count: 2) }
        assertInvalidMessage { _ = try AttachmentReader(ciphertext: damaged.dropLast(), pointer: encrypted.pointer) }
    }
}
