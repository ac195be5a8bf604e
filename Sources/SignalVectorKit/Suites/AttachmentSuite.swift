import Foundation
@_spi(Testing) import SessionKit
import SignalPrimitives

/// SPEC §8 suite `attachment` (SPEC §10): `file_key`, `nonce` (16 bytes), `content` (hex, or
/// `content_length` bytes of SHA-256(content_seed || u64(i)), i = 0, 1, …) → `padded_length`,
/// `ciphertext_sha256`, `pointer`.
///
/// A valid test encrypts the content with the given key and nonce: padded(n) must be
/// `padded_length`, the ciphertext's SHA-256 `ciphertext_sha256` and the pointer `pointer`;
/// then `pointer` (decoded) must decrypt the ciphertext to the content through the whole-file
/// API, and the random-access reader must return the same bytes. An error test decrypts its
/// `ciphertext` (hex, or `{"test": id, <op>}`: the ciphertext of valid test `id` in the same
/// file with exactly one of `truncate_to`, `append`, `swap_chunks`, `flip_byte` applied) with
/// its `pointer` through the whole-file API, which must throw `error` (and so release nothing).
public enum AttachmentSuite: FileContextProtocolSuite {
    /// The suite name in vector files.
    public static let name = "attachment"

    /// The ciphertext chunk size of SPEC §10's `swap_chunks` (64 KiB and a tag).
    static let sealedChunkByteCount = 65536 + 16
    /// The largest content a test may ask for (the runner's cap on the work of one file).
    static let maximumContentLength = 64 << 20

    /// Runs one test without the other tests of its file (an error test that refers to another
    /// test then fails).
    /// - Throws: `VectorFailure` on a mismatch or a malformed test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        try run(test, file: [:])
    }

    /// Runs one test; `file` holds the file's tests by id.
    /// - Throws: `VectorFailure` on a mismatch or a malformed test.
    public static func run(_ test: VectorTest, file: [Int: VectorTest]) throws -> VectorOutcome {
        if let expected = test.expectedError {
            let pointerBytes = try test.hex("pointer")
            let ciphertext = try errorCiphertext(test, file: file)
            try ExpectedError.check(expected) {
                let pointer = try AttachmentPointer(serialized: pointerBytes)
                _ = try Attachment.decrypt(Data(ciphertext), pointer: pointer)
            }
            return .passed
        }

        let content = try content(of: test)
        let (ciphertext, pointer) = try encrypt(test, content: content)
        let expectedPadded = try test.int("padded_length")
        guard try Attachment.paddedLength(forContentLength: UInt64(content.count)) == UInt64(expectedPadded) else {
            throw VectorFailure("padded(\(content.count)) is \(try Attachment.paddedLength(forContentLength: UInt64(content.count))), expected \(expectedPadded)")
        }
        try ExpectedError.equal(SHA256.hash(ciphertext), try test.hex("ciphertext_sha256"), "ciphertext SHA-256")
        let expectedPointer = try test.hex("pointer")
        try ExpectedError.equal(pointer.serialized(), expectedPointer, "pointer")

        let decoded = try AttachmentPointer(serialized: expectedPointer)
        guard decoded.contentLength == UInt64(content.count) else { throw VectorFailure("decoded pointer length \(decoded.contentLength)") }
        let opened = try Attachment.decrypt(Data(ciphertext), pointer: decoded)
        try ExpectedError.equal([UInt8](opened), content, "decrypted content")
        // Random access: the first and last bytes and a range across a chunk boundary.
        let reader = try AttachmentReader(ciphertext: Data(ciphertext), pointer: decoded)
        for (offset, count) in [(0, 100), (max(content.count - 100, 0), 200), (65_500, 100)] where offset < max(content.count, 1) {
            let expected = Array(content[min(offset, content.count) ..< min(offset + count, content.count)])
            try ExpectedError.equal([UInt8](try reader.read(offset: UInt64(offset), count: count)), expected, "bytes \(offset)+\(count)")
        }
        return .passed
    }

    /// The test's content: `content` as hex, or `content_length` bytes of the SHA-256 counter
    /// stream of `content_seed`.
    static func content(of test: VectorTest) throws -> [UInt8] {
        if test.has("content") { return try test.hex("content") }
        let length = try test.int("content_length")
        guard (0 ... maximumContentLength).contains(length) else { throw VectorFailure("content_length \(length) outside 0 … \(maximumContentLength)") }
        let seed = try test.hex("content_seed")
        var out: [UInt8] = []
        out.reserveCapacity(length + 32)
        var counter: UInt64 = 0
        while out.count < length {
            var block = seed
            for shift in stride(from: 56, through: 0, by: -8) { block.append(UInt8(truncatingIfNeeded: counter >> UInt64(shift))) }
            out += SHA256.hash(block)
            counter += 1
        }
        return Array(out.prefix(length))
    }

    /// Encrypts `content` with the test's `file_key` and `nonce`.
    static func encrypt(_ test: VectorTest, content: [UInt8]) throws -> (ciphertext: [UInt8], pointer: AttachmentPointer) {
        let keyBytes = try test.hex("file_key")
        let nonce = try test.hex("nonce")
        guard keyBytes.count == AgeFileKey.byteCount else { throw VectorFailure("file_key must be 16 bytes, got \(keyBytes.count)") }
        guard nonce.count == 16 else { throw VectorFailure("nonce must be 16 bytes, got \(nonce.count)") }
        let encryptor = try AttachmentEncryptor(fileKey: try AgeFileKey(bytes: SecureBytes(copying: keyBytes)), nonce: nonce)
        var ciphertext: [UInt8] = []
        try content.withBytes { (bytes: UnsafeRawBufferPointer) throws(SessionError) in
            try encryptor.update(bytes) { ciphertext += $0 }
        }
        let pointer = try encryptor.finish { ciphertext += $0 }
        return (ciphertext, pointer)
    }

    /// The ciphertext of an error test: hex, or one operation on a valid test's ciphertext.
    static func errorCiphertext(_ test: VectorTest, file: [Int: VectorTest]) throws -> [UInt8] {
        if test.fields["ciphertext"] is String { return try test.hex("ciphertext") }
        let recipe = try test.object("ciphertext")
        let id = try recipe.int("test")
        guard let base = file[id] else { throw VectorFailure("ciphertext refers to test \(id), not in this file") }
        guard base.expectedError == nil else { throw VectorFailure("ciphertext refers to test \(id), an error test") }
        var ciphertext = try encrypt(base, content: try content(of: base)).ciphertext
        let operations = ["truncate_to", "append", "swap_chunks", "flip_byte"].filter { recipe.has($0) }
        guard operations.count == 1, let operation = operations.first else {
            throw VectorFailure("ciphertext needs exactly one of truncate_to, append, swap_chunks, flip_byte; got \(operations)")
        }
        switch operation {
        case "truncate_to":
            let length = try recipe.int("truncate_to")
            guard (0 ... ciphertext.count).contains(length) else { throw VectorFailure("truncate_to \(length) beyond \(ciphertext.count) bytes") }
            ciphertext.removeSubrange(length...)
        case "append":
            ciphertext += try recipe.hex("append")
        case "swap_chunks":
            guard let pair = recipe.fields["swap_chunks"] as? [Any], pair.count == 2,
                  let i = VectorTest.integer(pair[0]), let j = VectorTest.integer(pair[1]) else {
                throw VectorFailure("swap_chunks must be [i, j]")
            }
            var chunks = stride(from: 16, to: ciphertext.count, by: sealedChunkByteCount).map {
                Array(ciphertext[$0 ..< min($0 + sealedChunkByteCount, ciphertext.count)])
            }
            guard chunks.indices.contains(i), chunks.indices.contains(j) else { throw VectorFailure("swap_chunks \([i, j]) outside \(chunks.count) chunks") }
            chunks.swapAt(i, j)
            ciphertext = Array(ciphertext[0 ..< 16]) + chunks.flatMap { $0 }
        default:
            let offset = try recipe.int("flip_byte")
            guard ciphertext.indices.contains(offset) else { throw VectorFailure("flip_byte \(offset) outside \(ciphertext.count) bytes") }
            ciphertext[offset] ^= 0xFF
        }
        return ciphertext
    }
}
