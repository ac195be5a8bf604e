import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// The parallel STREAM pipeline of the file-to-file paths (issue 20): with small pieces (4
/// chunks) and no size threshold, the parallel path must write byte for byte the payload the
/// sequential encoder gives for the same file key and nonce, at and around chunk and piece
/// boundaries; it must decrypt them back; and a damaged file must fail with the error of the
/// sequential path, release nothing from the failing chunk on, and leave no destination file.
final class AgeParallelFileTests: XCTestCase {
    private static let chunk = 65536
    private static let sealedChunk = 65536 + 16
    /// Pieces of 4 chunks, parallel from the first byte.
    private static let parallel = AgeParallelism(isParallel: true, chunksPerPiece: 4, minimumParallelByteCount: 0)
    private static let piece = 4 * chunk

    private let fileKey = AgeFileKey(using: FixedRandom(byte: 0x33))
    private let nonce = [UInt8](repeating: 0x44, count: 16)
    private let identity = try? AgeX25519Identity(using: FixedRandom(byte: 0x55))
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("age-parallel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func content(_ count: Int) -> Data {
        var generator = SplitMix64(seed: UInt64(count) &+ 7)
        return Data((0 ..< count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    private func encryptor(armored: Bool = false) throws -> AgeEncryptor {
        let identity = try XCTUnwrap(identity)
        return AgeEncryptor(recipients: [identity.recipient], armored: armored)
    }

    /// The file the sequential stream gives for `plaintext`, fed in one piece.
    private func sequentialFile(_ plaintext: Data, armored: Bool = false) throws -> Data {
        let stream = try encryptor(armored: armored).makeStream(fileKey: fileKey, nonce: nonce)
        var file = try stream.update(plaintext)
        file += try stream.finish()
        return file
    }

    /// `actual` and `expected` (binary files for the same file key and nonce) have headers of
    /// the same length and byte-identical payloads (the headers differ: each X25519 stanza has
    /// its own ephemeral share).
    private func assertSamePayload(_ actual: Data, _ expected: Data, plaintextCount: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let payload = try XCTUnwrap(AgePayloadCipher.payloadByteCount(plaintextCount: UInt64(plaintextCount)), file: file, line: line)
        XCTAssertEqual(actual.count, expected.count, "size \(plaintextCount)", file: file, line: line)
        XCTAssertEqual(actual.suffix(Int(payload)), expected.suffix(Int(payload)), "size \(plaintextCount)", file: file, line: line)
        XCTAssertEqual(actual.suffix(Int(payload)).prefix(16), Data(nonce), file: file, line: line)
    }

    private func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    private func listing() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) }

    private static let sizes = [0, 1, chunk - 1, chunk, chunk + 1, 2 * chunk, piece - 1, piece, piece + 1, 2 * piece, 3 * piece + 1, 5 * piece + chunk + 7]

    func testTheParallelPathWritesTheSequentialFileAndDecryptsIt() throws {
        let identity = try XCTUnwrap(identity)
        for size in Self.sizes {
            let plaintext = content(size)
            let source = url("plain-\(size)"), encrypted = url("plain-\(size).age"), decrypted = url("out-\(size)")
            try plaintext.write(to: source)
            let stream = try encryptor().makeStream(fileKey: fileKey, nonce: nonce)
            try encryptor().encrypt(contentsOf: source, to: encrypted, stream: stream, parallelism: Self.parallel)
            try assertSamePayload(try Data(contentsOf: encrypted), try sequentialFile(plaintext), plaintextCount: size)
            // The length age.md gives: header, nonce, one tag per chunk (at least one chunk).
            let chunks = max(1, (size + Self.chunk - 1) / Self.chunk)
            XCTAssertEqual(AgePayloadCipher.payloadByteCount(plaintextCount: UInt64(size)).map(Int.init), 16 + size + 16 * chunks)

            try AgeDecryptor(identities: [identity]).decrypt(contentsOf: encrypted, to: decrypted, parallelism: Self.parallel)
            XCTAssertEqual(try Data(contentsOf: decrypted), plaintext, "size \(size)")
            // The default (automatic) parallelism and the sequential one read the same file.
            try AgeDecryptor(identities: [identity]).decrypt(contentsOf: encrypted, to: decrypted)
            XCTAssertEqual(try Data(contentsOf: decrypted), plaintext, "size \(size)")
            try AgeDecryptor(identities: [identity]).decrypt(contentsOf: encrypted, to: decrypted, parallelism: .sequential)
            XCTAssertEqual(try Data(contentsOf: decrypted), plaintext, "size \(size)")
        }
    }

    func testArmoredFilesAreTheSameThroughTheParallelPath() throws {
        let identity = try XCTUnwrap(identity)
        for size in [Self.piece + 1, 3 * Self.piece + 1] {
            let plaintext = content(size)
            let source = url("plain"), encrypted = url("plain.age"), decrypted = url("out")
            try plaintext.write(to: source)
            let stream = try encryptor(armored: true).makeStream(fileKey: fileKey, nonce: nonce)
            try encryptor(armored: true).encrypt(contentsOf: source, to: encrypted, stream: stream, parallelism: Self.parallel)
            let armored = try Data(contentsOf: encrypted), expected = try sequentialFile(plaintext, armored: true)
            XCTAssertEqual(armored.count, expected.count, "size \(size)")
            try assertSamePayload(Data(AgeTesting.dearmor([UInt8](armored))), Data(AgeTesting.dearmor([UInt8](expected))), plaintextCount: size)
            try AgeDecryptor(identities: [identity]).decrypt(contentsOf: encrypted, to: decrypted, parallelism: Self.parallel)
            XCTAssertEqual(try Data(contentsOf: decrypted), plaintext, "size \(size)")
        }
    }

    /// The offset in `file` of payload chunk `index` (after the header and the 16-byte nonce).
    private func chunkOffset(_ index: Int, in file: Data, plaintextCount: Int) throws -> Int {
        let payload = try XCTUnwrap(AgePayloadCipher.payloadByteCount(plaintextCount: UInt64(plaintextCount)))
        return file.count - Int(payload) + 16 + index * Self.sealedChunk
    }

    /// Decrypts `damaged` through the parallel file path, the sequential file path and the
    /// whole-`Data` path; all must fail with `expected`, and the file paths must leave the
    /// destination as it was (absent) with no temporary file.
    private func assertFails(_ damaged: Data, with expected: AgeError, _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let identity = try XCTUnwrap(identity)
        let source = url("damaged.age"), destination = url("out")
        try damaged.write(to: source)
        for parallelism in [Self.parallel, .sequential, .automatic] {
            XCTAssertThrowsError(try AgeDecryptor(identities: [identity]).decrypt(contentsOf: source, to: destination, parallelism: parallelism), message, file: file, line: line) {
                XCTAssertEqual($0 as? AgeError, expected, message, file: file, line: line)
            }
            XCTAssertEqual(try listing(), ["damaged.age"], message, file: file, line: line)
        }
        XCTAssertThrowsError(try AgeDecryptor(identities: [identity]).decrypt(damaged), message, file: file, line: line) {
            XCTAssertEqual($0 as? AgeError, expected, message, file: file, line: line)
        }
    }

    func testACorruptedChunkFailsAsBeforeAndLeavesNoFile() throws {
        // 5 pieces and a bit: 22 chunks, the last one short.
        let size = 5 * Self.piece + Self.chunk + 7
        let file = try sequentialFile(content(size))
        // The first chunk, in the middle of a piece (the first and a later one), the last
        // chunk of a piece, the first of the last piece, in the last piece, the final chunk.
        for index in [0, 2, 6, 7, 20, 21] {
            var damaged = file
            damaged[try chunkOffset(index, in: file, plaintextCount: size) + 3] ^= 0x01
            try assertFails(damaged, with: .payload("chunk \(index) does not verify"), "chunk \(index)")
        }
    }

    func testTruncatedReorderedAndExtendedFilesFailAsBefore() throws {
        let size = 3 * Self.piece
        let file = try sequentialFile(content(size))
        let start = try chunkOffset(0, in: file, plaintextCount: size)
        // Cut at a chunk boundary inside the payload: the last full chunk opens only as
        // non-final.
        try assertFails(file.prefix(start + 9 * Self.sealedChunk), with: .payload("the payload ends without a final chunk"), "truncated")
        // Two chunks of a piece swapped.
        var swapped = file
        let a = start + 1 * Self.sealedChunk, b = start + 2 * Self.sealedChunk
        swapped.replaceSubrange(a ..< a + Self.sealedChunk, with: file[b ..< b + Self.sealedChunk])
        swapped.replaceSubrange(b ..< b + Self.sealedChunk, with: file[a ..< a + Self.sealedChunk])
        try assertFails(swapped, with: .payload("chunk 1 does not verify"), "swapped")
        // The final (full) chunk followed by more data.
        try assertFails(file + file[start ..< start + Self.sealedChunk], with: .payload("data after the final chunk"), "extended")
    }

    func testAStreamWithBatchesReleasesOnlyTheChunksBeforeTheFailingOne() throws {
        let identity = try XCTUnwrap(identity)
        let size = 3 * Self.piece + 1
        let plaintext = content(size)
        let file = try sequentialFile(plaintext)
        for index in [1, 5, 10] {
            var damaged = file
            damaged[try chunkOffset(index, in: file, plaintextCount: size) + 7] ^= 0x80
            let stream = AgeDecryptor(identities: [identity]).makeStream()
            stream.batchChunks = 8
            var released = Data()
            XCTAssertThrowsError(try stream.update(damaged, release: { released += $0 })) {
                XCTAssertEqual($0 as? AgeError, .payload("chunk \(index) does not verify"))
            }
            XCTAssertEqual(released, plaintext.prefix(index * Self.chunk), "chunk \(index)")
        }
    }
}
