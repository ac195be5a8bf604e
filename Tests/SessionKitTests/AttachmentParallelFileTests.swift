import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// The parallel STREAM pipeline of the attachment file paths (issue 20): with small pieces (4
/// chunks) and no size threshold, `Attachment.encrypt(contentsOf:to:)` must write byte for byte
/// the ciphertext (and the pointer) of the sequential encryptor for the same key and nonce, and
/// `Attachment.decrypt(contentsOf:pointer:to:)` must give the content back, or fail as the
/// sequential path does, with no destination file, when a chunk is damaged.
final class AttachmentParallelFileTests: XCTestCase {
    private static let chunk = 65536
    private static let sealedChunk = 65536 + 16
    private static let parallel = AgeParallelism(isParallel: true, chunksPerPiece: 4, minimumParallelByteCount: 0)
    private static let piece = 4 * chunk

    private let nonce = [UInt8](repeating: 0x66, count: 16)
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("attachment-parallel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func content(_ count: Int) -> Data {
        var generator = SplitMix64(seed: UInt64(count) &+ 11)
        return Data((0 ..< count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    private func fileKey() -> AgeFileKey { AgeFileKey(using: FixedRandom(byte: 0x77)) }

    private func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    func testTheParallelPathWritesTheSequentialCiphertextAndDecryptsIt() throws {
        // Padded lengths land on and around chunk and piece boundaries too (5 % buckets).
        let sizes = [0, 1, Self.chunk, Self.chunk + 1, Self.piece - 1, Self.piece, Self.piece + 1, 3 * Self.piece + 1, 6 * Self.piece]
        for size in sizes {
            let plaintext = content(size)
            let source = url("content-\(size)"), encrypted = url("content-\(size).enc"), decrypted = url("out-\(size)")
            try plaintext.write(to: source)
            let pointer = try Attachment.encrypt(
                contentsOf: source, to: encrypted, encryptor: AttachmentEncryptor(fileKey: fileKey(), nonce: nonce), parallelism: Self.parallel)
            let sequential = try AttachmentEncryptor(fileKey: fileKey(), nonce: nonce)
            var expected = try sequential.update(plaintext)
            let (tail, expectedPointer) = try sequential.finish()
            expected += tail
            let ciphertext = try Data(contentsOf: encrypted)
            XCTAssertEqual(ciphertext, expected, "size \(size)")
            XCTAssertEqual(UInt64(ciphertext.count), try Attachment.ciphertextLength(forContentLength: UInt64(size)))
            XCTAssertEqual(pointer.serialized(), expectedPointer.serialized(), "size \(size)")

            try Attachment.decrypt(contentsOf: encrypted, pointer: pointer, to: decrypted, parallelism: Self.parallel)
            XCTAssertEqual(try Data(contentsOf: decrypted), plaintext, "size \(size)")
            try Attachment.decrypt(contentsOf: encrypted, pointer: pointer, to: decrypted)
            XCTAssertEqual(try Data(contentsOf: decrypted), plaintext, "size \(size)")
        }
    }

    func testACorruptedChunkFailsAsBeforeAndLeavesNoFile() throws {
        let size = 5 * Self.piece + Self.chunk
        let source = url("content"), encrypted = url("content.enc"), destination = url("out")
        try content(size).write(to: source)
        let pointer = try Attachment.encrypt(contentsOf: source, to: encrypted, encryptor: AttachmentEncryptor(fileKey: fileKey(), nonce: nonce), parallelism: .sequential)
        let ciphertext = try Data(contentsOf: encrypted)
        let chunks = (ciphertext.count - 16 + Self.sealedChunk - 1) / Self.sealedChunk
        for index in [0, 2, 6, 7, chunks - 2, chunks - 1] {
            var damaged = ciphertext
            damaged[16 + index * Self.sealedChunk + 3] ^= 0x01
            let bad = url("damaged.enc")
            try damaged.write(to: bad)
            for parallelism in [Self.parallel, .sequential, .automatic] {
                XCTAssertThrowsError(try Attachment.decrypt(contentsOf: bad, pointer: pointer, to: destination, parallelism: parallelism), "chunk \(index)") {
                    XCTAssertEqual($0 as? SessionError, .invalidMessage, "chunk \(index)")
                }
                XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)), ["content", "content.enc", "damaged.enc"], "chunk \(index)")
            }
        }
    }

    func testADecoderWithBatchesReleasesOnlyTheChunksBeforeTheFailingOne() throws {
        let size = 3 * Self.piece + 1
        let plaintext = content(size)
        let encryptor = try AttachmentEncryptor(fileKey: fileKey(), nonce: nonce)
        var ciphertext = try encryptor.update(plaintext)
        let (tail, pointer) = try encryptor.finish()
        ciphertext += tail
        for index in [1, 5, 10] {
            var damaged = ciphertext
            damaged[16 + index * Self.sealedChunk + 7] ^= 0x80
            // Without the digest check, so that only the chunk's tag stops the release.
            var decoder = try AttachmentDecoder(pointer: pointer, checksDigest: false)
            decoder.batchChunks = 8
            var released = Data()
            XCTAssertThrowsError(try damaged.withUnsafeBytes { try decoder.update($0) { released += $0 } }) {
                XCTAssertEqual($0 as? SessionError, .invalidMessage, "chunk \(index)")
            }
            XCTAssertEqual(released, plaintext.prefix(index * Self.chunk), "chunk \(index)")
        }
    }
}
