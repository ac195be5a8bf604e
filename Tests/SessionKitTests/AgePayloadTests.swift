import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// The STREAM payload against damaged files: truncation at and around every chunk boundary,
/// swapped, repeated and dropped chunks, a flipped final flag, trailing data, and what a
/// stream releases before it fails (only chunks whose tag verified, in order).
final class AgePayloadTests: XCTestCase {
    private let fileKey = AgeFileKey(using: FixedRandom(byte: 0x11))
    private let nonce = [UInt8](repeating: 0x22, count: 16)
    private static let chunk = 65536
    private static let sealedChunk = 65536 + 16

    private func plaintext(_ count: Int) -> [UInt8] {
        var generator = SplitMix64(seed: UInt64(count))
        return (0 ..< count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    /// The payload (after the nonce) of `plaintext`, sealed chunk by chunk with the given
    /// final flags (by default the spec's: only the last chunk final).
    private func chunks(of plaintext: [UInt8], finalFlags: [Bool]? = nil) throws -> [[UInt8]] {
        let cipher = try AgePayloadCipher(fileKey: fileKey, nonce: nonce)
        let pieces = stride(from: 0, to: max(plaintext.count, 1), by: Self.chunk).map {
            Array(plaintext[$0 ..< min($0 + Self.chunk, plaintext.count)])
        }
        return try pieces.enumerated().map { index, piece in
            let final = finalFlags?[index] ?? (index == pieces.count - 1)
            var out = [UInt8](repeating: 0, count: piece.count + 16)
            _ = try piece.withBytes { (p: UnsafeRawBufferPointer) throws(AgeError) in
                try out.withMutableBytes { (o: UnsafeMutableRawBufferPointer) throws(AgeError) in
                    try cipher.seal(p, index: UInt64(index), final: final, into: o)
                }
            }
            return out
        }
    }

    /// Decrypts `payload` (after the nonce) in pieces of `pieceSize`; returns what was
    /// released and the error, if any.
    private func decrypt(_ payload: [UInt8], pieceSize: Int = 10000) throws -> (released: [UInt8], error: AgeError?) {
        var decoder = AgePayloadDecoder(cipher: try AgePayloadCipher(fileKey: fileKey, nonce: nonce))
        var released: [UInt8] = []
        do throws(AgeError) {
            var offset = 0
            while offset < payload.count {
                let end = min(offset + pieceSize, payload.count)
                try payload[offset ..< end].withBytes { (b: UnsafeRawBufferPointer) throws(AgeError) in
                    try decoder.update(b) { released += $0 }
                }
                offset = end
            }
            try decoder.finish { released += $0 }
            return (released, nil)
        } catch {
            return (released, error)
        }
    }

    /// The whole age file: the encryptor's header and nonce, then `payload`.
    private func file(payload: [UInt8], identity: AgeX25519Identity) throws -> Data {
        let stream = try AgeEncryptor(recipients: [identity.recipient]).makeStream(fileKey: fileKey, nonce: nonce)
        let empty = try stream.finish()
        return empty.prefix(empty.count - 16) + Data(payload)
    }

    func testTheEncoderWritesTheSpecifiedChunks() throws {
        // The encoder's output equals chunks sealed one by one with the spec's nonces, for
        // plaintexts ending inside, at and after a chunk boundary.
        for count in [0, 1, Self.chunk - 1, Self.chunk, Self.chunk + 1, 2 * Self.chunk] {
            let data = plaintext(count)
            var encoder = AgePayloadEncoder(cipher: try AgePayloadCipher(fileKey: fileKey, nonce: nonce))
            var out: [UInt8] = []
            try data.withBytes { (b: UnsafeRawBufferPointer) throws(AgeError) in try encoder.update(b) { out += $0 } }
            try encoder.finish { out += $0 }
            XCTAssertEqual(out, try chunks(of: data).flatMap { $0 }, "\(count) bytes")
            let (released, error) = try decrypt(out)
            XCTAssertNil(error)
            XCTAssertEqual(released, data)
        }
    }

    func testTruncationAtAndAroundEveryChunkBoundaryFailsAndReleasesOnlyVerifiedChunks() throws {
        let data = plaintext(3 * Self.chunk + 100)
        let payload = try chunks(of: data).flatMap { $0 }
        var cuts: Set<Int> = [0, 1, 15, 16, 17, payload.count - 1, payload.count - 16, payload.count - 17]
        for boundary in 1 ... 3 {
            for delta in [-17, -16, -1, 0, 1, 15, 16, 17] { cuts.insert(boundary * Self.sealedChunk + delta) }
        }
        for cut in cuts.sorted() where cut < payload.count {
            let (released, error) = try decrypt(Array(payload[..<cut]))
            guard case .payload = error else { XCTFail("cut at \(cut): \(String(describing: error))"); continue }
            // Whole chunks before the cut may have been released, never a byte of a chunk
            // that did not verify, and always a prefix of the plaintext.
            XCTAssertEqual(released.count % Self.chunk, 0, "cut at \(cut)")
            XCTAssertLessThanOrEqual(released.count, cut / Self.sealedChunk * Self.chunk, "cut at \(cut)")
            XCTAssertEqual(released, Array(data.prefix(released.count)), "cut at \(cut)")
        }
        // At a chunk boundary the last full chunk verifies as non-final: it is released, then
        // the missing final chunk fails the payload.
        let (released, error) = try decrypt(Array(payload[..<(2 * Self.sealedChunk)]))
        XCTAssertEqual(error, .payload("the payload ends without a final chunk"))
        XCTAssertEqual(released, Array(data.prefix(2 * Self.chunk)))
    }

    func testSwappedRepeatedDroppedAndReflaggedChunksFail() throws {
        let data = plaintext(3 * Self.chunk + 100)
        let sealed = try chunks(of: data)
        let variants: [(String, [[UInt8]])] = [
            ("swapped 0 and 1", [sealed[1], sealed[0], sealed[2], sealed[3]]),
            ("swapped 1 and 2", [sealed[0], sealed[2], sealed[1], sealed[3]]),
            ("repeated 1", [sealed[0], sealed[1], sealed[1], sealed[2], sealed[3]]),
            ("dropped 1", [sealed[0], sealed[2], sealed[3]]),
            ("final chunk repeated", [sealed[0], sealed[1], sealed[2], sealed[3], sealed[3]]),
        ]
        for (name, chunks) in variants {
            let (released, error) = try decrypt(chunks.flatMap { $0 })
            guard case .payload = error else { XCTFail("\(name): \(String(describing: error))"); continue }
            XCTAssertEqual(released, Array(data.prefix(released.count)), name)
            XCTAssertLessThan(released.count, data.count, name)
        }
        // A final flag on a middle chunk: that chunk is authentic, so it is released, then the
        // data after it fails the payload.
        let early = try chunks(of: data, finalFlags: [false, true, false, true])
        let (released, error) = try decrypt(early.flatMap { $0 })
        XCTAssertEqual(error, .payload("data after the final chunk"))
        XCTAssertEqual(released, Array(data.prefix(2 * Self.chunk)))
        // No final flag on the last chunk.
        let none = try chunks(of: data, finalFlags: [false, false, false, false])
        let noFinal = try decrypt(none.flatMap { $0 })
        XCTAssertEqual(noFinal.error, .payload("chunk 3 does not verify"))
        XCTAssertEqual(noFinal.released, Array(data.prefix(3 * Self.chunk)))
        // An empty final chunk after full chunks (the spec forbids it) fails before decryption.
        let full = plaintext(Self.chunk)
        let emptyFinal = try chunks(of: full, finalFlags: [false]) + [try sealEmptyFinal(index: 1)]
        let emptyResult = try decrypt(emptyFinal.flatMap { $0 })
        XCTAssertEqual(emptyResult.error, .payload("the final chunk is empty but the payload is not"))
        XCTAssertEqual(emptyResult.released, full)
    }

    private func sealEmptyFinal(index: UInt64) throws -> [UInt8] {
        let cipher = try AgePayloadCipher(fileKey: fileKey, nonce: nonce)
        var out = [UInt8](repeating: 0, count: 16)
        _ = try out.withMutableBytes { (o: UnsafeMutableRawBufferPointer) throws(AgeError) in
            try cipher.seal(UnsafeRawBufferPointer(start: nil, count: 0), index: index, final: true, into: o)
        }
        return out
    }

    func testTrailingDataAndFlippedBytes() throws {
        let data = plaintext(2 * Self.chunk + 1)
        let payload = try chunks(of: data).flatMap { $0 }
        for trailing in [[UInt8(0)], [UInt8](repeating: 0, count: 16), [UInt8](repeating: 7, count: 100)] {
            let (released, error) = try decrypt(payload + trailing)
            guard case .payload = error else { XCTFail("\(String(describing: error))"); continue }
            XCTAssertEqual(released, Array(data.prefix(released.count)))
        }
        for offset in [0, 100, Self.sealedChunk - 1, Self.sealedChunk, 2 * Self.sealedChunk + 5, payload.count - 1] {
            var damaged = payload
            damaged[offset] ^= 0x80
            let (released, error) = try decrypt(damaged, pieceSize: 777)
            guard case .payload = error else { XCTFail("flip at \(offset): \(String(describing: error))"); continue }
            // Nothing of the damaged chunk or after it is released.
            XCTAssertEqual(released, Array(data.prefix(offset / Self.sealedChunk * Self.chunk)), "flip at \(offset)")
        }
    }

    func testDamagedFilesReleaseNothingThroughTheWholeFileAPIAndFailAsPayload() throws {
        let identity = try AgeX25519Identity()
        let data = plaintext(2 * Self.chunk + 10)
        let payload = try chunks(of: data).flatMap { $0 }
        XCTAssertEqual(try AgeDecryptor(identities: [identity]).decrypt(try file(payload: payload, identity: identity)), Data(data))
        for damaged in [Array(payload.dropLast()), payload + [0], Array(payload[Self.sealedChunk...])] {
            XCTAssertThrowsError(try AgeDecryptor(identities: [identity]).decrypt(try file(payload: damaged, identity: identity))) {
                guard case .payload = $0 as? AgeError else { return XCTFail("\($0)") }
            }
        }
        // A file that ends inside its nonce is a header failure (C2SP/CCTV's stream_short_nonce).
        let whole = try file(payload: payload, identity: identity)
        let short = whole.prefix(whole.count - payload.count - 3)
        XCTAssertThrowsError(try AgeDecryptor(identities: [identity]).decrypt(short)) {
            XCTAssertEqual($0 as? AgeError, .header("the file ends before its payload nonce"))
        }
    }

    /// A stream keeps failing after its first error and releases nothing more.
    func testAStreamStaysFailed() throws {
        let identity = try AgeX25519Identity()
        let data = plaintext(3 * Self.chunk)
        var payload = try chunks(of: data).flatMap { $0 }
        payload[Self.sealedChunk + 3] ^= 1
        let whole = try file(payload: payload, identity: identity)
        let stream = AgeDecryptingStream(identities: [identity], format: .binary)
        var released = Data()
        XCTAssertThrowsError(try stream.update(whole, release: { released += $0 }))
        XCTAssertEqual(released, Data(data.prefix(Self.chunk)))
        XCTAssertThrowsError(try stream.update(Data([1, 2, 3]), release: { released += $0 }))
        XCTAssertThrowsError(try stream.finish(release: { released += $0 }))
        XCTAssertEqual(released.count, Self.chunk)
    }
}

/// A random source that fills with one byte (fixed file keys in tests).
struct FixedRandom: RandomSource {
    let byte: UInt8
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in buffer.indices { buffer[index] = byte }
    }
}
