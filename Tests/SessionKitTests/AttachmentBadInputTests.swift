import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// Damaged attachment ciphertexts (SPEC §10): truncation at every chunk boundary, swapped and
/// repeated chunks, a moved or missing final flag, trailing data and a wrong digest. Each is
/// given a pointer that carries the SHA-256 of the damaged ciphertext (and its length where it
/// must match), so that the length and STREAM rules themselves are tested, not only the digest.
/// Every decryption form must refuse it with `invalidMessage`, the whole-file forms releasing
/// nothing.
final class AttachmentBadInputTests: XCTestCase {
    private let chunk = 65536
    private let sealedChunk = 65536 + 16
    private let fileKey = AgeFileKey(using: FixedRandom(byte: 0x5A))
    private let nonce = [UInt8](repeating: 0xA5, count: 16)

    /// A 4-chunk attachment (padded(200,000) = 202,794 bytes, computed with Python) made with the fixed key and nonce.
    private func attachment() throws -> (content: Data, ciphertext: [UInt8], pointer: AttachmentPointer) {
        let content = AttachmentTests.content(200_000)
        let encryptor = try AttachmentEncryptor(fileKey: fileKey, nonce: nonce)
        var ciphertext: [UInt8] = []
        try content.withBytes { (b: UnsafeRawBufferPointer) throws(SessionError) in try encryptor.update(b) { ciphertext += $0 } }
        let pointer = try encryptor.finish { ciphertext += $0 }
        XCTAssertEqual(ciphertext.count, 16 + 202_794 + 4 * 16)
        return (content, ciphertext, pointer)
    }

    /// The pointer of `content` with the digest of `ciphertext`.
    private func pointer(for ciphertext: [UInt8], contentLength: Int) throws -> AttachmentPointer {
        try AttachmentPointer(fileKey: fileKey, ciphertextDigest: SHA256.hash(ciphertext), contentLength: UInt64(contentLength))
    }

    /// The padded content of the attachment, sealed chunk by chunk with chosen indices and flags.
    private func sealedChunks(_ content: Data, indices: [UInt64]? = nil, finals: [Bool]? = nil) throws -> [[UInt8]] {
        let padded = [UInt8](content) + [UInt8](repeating: 0, count: 202_794 - content.count)
        let cipher = try AgePayloadCipher(fileKey: fileKey, nonce: nonce)
        let pieces = stride(from: 0, to: padded.count, by: chunk).map { Array(padded[$0 ..< min($0 + chunk, padded.count)]) }
        return try pieces.enumerated().map { position, piece in
            var out = [UInt8](repeating: 0, count: piece.count + 16)
            let index = indices?[position] ?? UInt64(position)
            let final = finals?[position] ?? (position == pieces.count - 1)
            _ = try piece.withBytes { (p: UnsafeRawBufferPointer) throws(AgeError) in
                try out.withMutableBytes { (o: UnsafeMutableRawBufferPointer) throws(AgeError) in try cipher.seal(p, index: index, final: final, into: o) }
            }
            return out
        }
    }

    /// Every decryption form refuses `ciphertext` under `pointer` with `invalidMessage`; the
    /// streaming form releases at most a prefix of `content`.
    private func assertRefused(_ name: String, _ ciphertext: [UInt8], _ pointer: AttachmentPointer, content: Data,
                               line: UInt = #line) async throws {
        XCTAssertThrowsError(try Attachment.decrypt(Data(ciphertext), pointer: pointer), name, line: line) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage, name, line: line)
        }
        let folder = try AttachmentTests.temporaryFolder(self)
        let source = folder.appendingPathComponent("in"), destination = folder.appendingPathComponent("out")
        try Data(ciphertext).write(to: source)
        XCTAssertThrowsError(try Attachment.decrypt(contentsOf: source, pointer: pointer, to: destination), name, line: line) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage, name, line: line)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), name, line: line)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["in"], name, line: line)

        var released = Data()
        let pieces = AsyncStream<Data> { continuation in
            for start in stride(from: 0, to: ciphertext.count, by: 40_000) {
                continuation.yield(Data(ciphertext[start ..< min(start + 40_000, ciphertext.count)]))
            }
            continuation.finish()
        }
        do {
            for try await piece in Attachment.decryptedChunks(of: pieces, pointer: pointer) { released += piece }
            XCTFail("\(name): the async sequence ended without an error", line: line)
        } catch {
            XCTAssertEqual(error as? SessionError, .invalidMessage, name, line: line)
        }
        XCTAssertEqual(released, content.prefix(released.count), name, line: line)
        XCTAssertLessThan(released.count, content.count + 1, name, line: line)
    }

    func testTruncationAtAndAroundEveryChunkBoundary() async throws {
        let (content, ciphertext, _) = try attachment()
        var cuts = [0, 1, 15, 16, 17, ciphertext.count - 1, ciphertext.count - 16]
        for boundary in 1 ... 3 {
            for delta in [-1, 0, 1, 16] { cuts.append(16 + boundary * sealedChunk + delta) }
        }
        for cut in cuts {
            let truncated = Array(ciphertext[..<cut])
            // The pointer's digest matches the truncated ciphertext: only the length rule refuses it.
            try await assertRefused("cut at \(cut)", truncated, try pointer(for: truncated, contentLength: content.count), content: content)
        }
    }

    func testSwappedRepeatedAndDroppedChunks() async throws {
        let (content, ciphertext, _) = try attachment()
        let prefix = Array(ciphertext[0 ..< 16])
        let chunks = stride(from: 16, to: ciphertext.count, by: sealedChunk).map { Array(ciphertext[$0 ..< min($0 + sealedChunk, ciphertext.count)]) }
        XCTAssertEqual(chunks.count, 4)
        var variants: [(String, [[UInt8]])] = []
        for i in 0 ..< 4 { for j in (i + 1) ..< 4 { var c = chunks; c.swapAt(i, j); variants.append(("swap \(i) \(j)", c)) } }
        for i in 0 ..< 3 { for j in 0 ..< 3 where i != j { var c = chunks; c[j] = chunks[i]; variants.append(("chunk \(i) repeated at \(j)", c)) } }
        variants.append(("chunk 1 dropped, final repeated", [chunks[0], chunks[2], chunks[3], chunks[3]]))
        for (name, damaged) in variants {
            let bytes = prefix + damaged.flatMap { $0 }
            try await assertRefused(name, bytes, try pointer(for: bytes, contentLength: content.count), content: content)
        }
    }

    func testFinalFlagAndCounterErrors() async throws {
        let (content, ciphertext, _) = try attachment()
        let prefix = Array(ciphertext[0 ..< 16])
        XCTAssertTrue(prefix + (try sealedChunks(content)).flatMap { $0 } == ciphertext, "the helper seals as the encryptor does")
        let variants: [(String, [[UInt8]])] = [
            ("no final flag", try sealedChunks(content, finals: [false, false, false, false])),
            ("final flag on chunk 2 too", try sealedChunks(content, finals: [false, false, true, true])),
            ("final flag on chunk 0 only", try sealedChunks(content, finals: [true, false, false, false])),
            ("counters 1 2 3 4", try sealedChunks(content, indices: [1, 2, 3, 4])),
            ("counters 0 2 1 3", try sealedChunks(content, indices: [0, 2, 1, 3])),
        ]
        for (name, chunks) in variants {
            let bytes = prefix + chunks.flatMap { $0 }
            try await assertRefused(name, bytes, try pointer(for: bytes, contentLength: content.count), content: content)
        }
    }

    func testTrailingDataFlippedBytesAndAWrongDigest() async throws {
        let (content, ciphertext, goodPointer) = try attachment()
        for extra in [[UInt8(0)], [UInt8](repeating: 0, count: 16), [UInt8](repeating: 1, count: sealedChunk)] {
            let bytes = ciphertext + extra
            try await assertRefused("\(extra.count) trailing bytes", bytes, try pointer(for: bytes, contentLength: content.count), content: content)
        }
        for offset in [0, 15, 16, 16 + sealedChunk - 1, 16 + 2 * sealedChunk, ciphertext.count - 17, ciphertext.count - 1] {
            var bytes = ciphertext
            bytes[offset] ^= 0x01
            try await assertRefused("flip at \(offset)", bytes, try pointer(for: bytes, contentLength: content.count), content: content)
            try await assertRefused("flip at \(offset), original digest", bytes, goodPointer, content: content)
        }
        let wrongDigest = try AttachmentPointer(fileKey: fileKey, ciphertextDigest: [UInt8](repeating: 7, count: 32), contentLength: UInt64(content.count))
        try await assertRefused("wrong digest", ciphertext, wrongDigest, content: content)
        // Another content length with the same ciphertext: the length rule (or, within the same
        // padded bucket, nothing: SPEC §10 lets n alone decide what is released).
        let shorter = try AttachmentPointer(fileKey: fileKey, ciphertextDigest: goodPointer.ciphertextDigest, contentLength: 100_000)
        try await assertRefused("another bucket's n", ciphertext, shorter, content: content)
        let sameBucket = try AttachmentPointer(fileKey: fileKey, ciphertextDigest: goodPointer.ciphertextDigest, contentLength: 199_999)
        XCTAssertEqual(try Attachment.decrypt(Data(ciphertext), pointer: sameBucket), content.prefix(199_999))
    }
}
