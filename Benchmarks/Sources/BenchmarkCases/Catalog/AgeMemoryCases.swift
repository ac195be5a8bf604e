import BenchmarkHarness
import CSodiumBench
import Foundation
import SessionKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `age.memory.{file,stream}.1GiB` (SPEC §10, issue 20): the peak resident memory the library
/// adds while it encrypts a 1 GiB file to an X25519 recipient and decrypts it again, file to
/// file (`AgeEncryptor.encrypt(contentsOf:to:)`, `AgeDecryptor.decrypt(contentsOf:to:)`) and
/// through the streaming API (`AgeEncryptingStream` / `AgeDecryptingStream` fed 64 KiB reads,
/// their output written as it comes). One operation is the encryption and the decryption; the
/// figure is bytes above the process's resident set just before it (`PeakResidentMemory`).
/// Target: at most 32 MiB (an absolute target; no floor target). The floor is the same work
/// with raw libsodium calls in a loop holding one chunk (the age payload without a header:
/// HKDF, ChaCha20-Poly1305-IETF per 64 KiB chunk), the least a chunked reader needs. In the
/// smoke run (`BENCH_QUICK`) the file is 64 MiB (`age.memory.*.64MiB`).
enum AgeMemoryCases {
    static let target = RatioTargets(libraryMaximum: Double(32 << 20))
    static let chunk = 65536

    static var all: [BenchmarkCase] {
        let (size, label) = FileRowSizes.memoryFile
        let shared = SharedScratch { try Files(contentLength: size) }
        return [
            row("age.memory.file.\(label)", "peak resident memory added while encrypting a \(label) file to a new file for an X25519 recipient and decrypting it back (file-to-file API)", shared, library: fileToFile),
            row("age.memory.stream.\(label)", "peak resident memory added while encrypting a \(label) file and decrypting it back through the streaming API (64 KiB reads, output written as it comes)", shared, library: streaming),
        ]
    }

    static func row(
        _ name: String, _ summary: String, _ shared: SharedScratch<Files>, library: @escaping (Files) throws -> Void
    ) -> BenchmarkCase {
        BenchmarkCase(
            name: name, summary: summary, group: .files, targets: target, unit: .peakResidentBytes,
            library: { try measuring(shared.acquire(), library) },
            floor: { try measuring(shared.acquire(), floorRoundTrip) }, swiftCrypto: nil,
            check: {
                let files = try shared.acquire()
                let operations: [(String, (Files) throws -> Void)] = [("library", library), ("floor", floorRoundTrip)]
                for (contender, operation) in operations {
                    try operation(files)
                    try CheckFailure.expect(
                        hex(try ScratchFiles.sha256(of: files.decrypted)), equals: hex(files.plaintextDigest),
                        "\(name) \(contender): the file decrypted back")
                }
            })
    }

    /// A workload whose batch figure is the peak resident bytes its operations added.
    static func measuring(_ files: Files, _ operation: @escaping (Files) throws -> Void) -> Workload {
        Workload.measuring { n in
            try PeakResidentMemory.measure { for _ in 0 ..< n { try operation(files) } }
        }
    }

    /// The plaintext and an identity; each operation writes `encrypted` and `decrypted`.
    final class Files: @unchecked Sendable {
        let scratch: ScratchFiles
        let identity: AgeX25519Identity
        let plaintext: URL
        let encrypted: URL
        let decrypted: URL
        let plaintextDigest: [UInt8]
        let fileKey: [UInt8] = (0 ..< 16).map { UInt8($0 &* 7 &+ 3) }

        init(contentLength: Int) throws {
            scratch = try ScratchFiles()
            identity = try AgeX25519Identity()
            plaintext = try scratch.writeContent("plaintext", count: contentLength)
            encrypted = scratch.url("encrypted.age")
            decrypted = scratch.url("decrypted")
            plaintextDigest = try ScratchFiles.sha256(of: plaintext)
        }
    }

    static func fileToFile(_ files: Files) throws {
        try AgeEncryptor(recipients: [files.identity.recipient]).encrypt(contentsOf: files.plaintext, to: files.encrypted)
        try AgeDecryptor(identities: [files.identity]).decrypt(contentsOf: files.encrypted, to: files.decrypted)
    }

    static func streaming(_ files: Files) throws {
        let encryptor = try AgeEncryptor(recipients: [files.identity.recipient]).makeStream()
        try pump(from: files.plaintext, to: files.encrypted, piece: chunk) { piece, write in
            if let piece { try encryptor.update(piece, outputBytes: write) } else { try encryptor.finish(outputBytes: write) }
        }
        let decryptor = AgeDecryptor(identities: [files.identity]).makeStream()
        try pump(from: files.encrypted, to: files.decrypted, piece: chunk) { piece, write in
            if let piece { try decryptor.update(piece, releaseBytes: write) } else { try decryptor.finish(releaseBytes: write) }
        }
    }

    /// Reads `source` in pieces of `piece` bytes into one buffer, hands each to `step` (then nil
    /// at the end) with a writer to `destination` (created or truncated).
    static func pump(
        from source: URL, to destination: URL, piece: Int,
        _ step: (UnsafeRawBufferPointer?, (UnsafeRawBufferPointer) -> Void) throws -> Void
    ) throws {
        let input = open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw CheckFailure("cannot open \(source.path)") }
        defer { close(input) }
        let output = open(destination.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw CheckFailure("cannot create \(destination.path)") }
        defer { close(output) }
        var writeFailed = false
        let emit = { (bytes: UnsafeRawBufferPointer) in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count, !writeFailed {
                let count = write(output, base + offset, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { writeFailed = true } else { offset += count }
            }
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: piece, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(input, buffer.baseAddress, piece)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw CheckFailure("cannot read \(source.path)") }
            if count == 0 { break }
            try step(UnsafeRawBufferPointer(rebasing: buffer[0 ..< count]), emit)
        }
        try step(nil, emit)
        guard !writeFailed else { throw CheckFailure("cannot write \(destination.path)") }
    }

    /// The floor: the age payload (nonce, then STREAM chunks) with libsodium, one chunk held.
    static func floorRoundTrip(_ files: Files) throws {
        _ = SodiumBackend.isReady
        let length = try ScratchFiles.size(of: files.plaintext)
        let chunks = max(1, (length + chunk - 1) / chunk)
        var nonce = [UInt8](repeating: 0, count: 16)
        randombytes_buf(&nonce, 16)
        let key = AttachmentCases.Floor.payloadKey(fileKey: files.fileKey, nonce: nonce)
        var sealed = [UInt8](repeating: 0, count: chunk + 16)
        var index = 0
        try pump(from: files.plaintext, to: files.encrypted, piece: chunk) { piece, write in
            if index == 0 { nonce.withUnsafeBytes(write) }
            guard let piece else { return }
            let chunkNonce = AttachmentCases.Floor.chunkNonce(index, final: index == chunks - 1)
            _ = crypto_aead_chacha20poly1305_ietf_encrypt(&sealed, nil, piece.u8, UInt64(piece.count), nil, 0, nil, chunkNonce, key)
            sealed.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[0 ..< piece.count + 16])) }
            index += 1
        }
        // Decrypt: the nonce, then sealed chunks of 64 KiB + 16.
        var opened = [UInt8](repeating: 0, count: chunk)
        var readNonce: [UInt8] = []
        var pending: [UInt8] = []
        var openKey: [UInt8] = []
        index = 0
        try pump(from: files.encrypted, to: files.decrypted, piece: chunk + 16) { piece, write in
            // Pieces of the file are re-cut into the nonce and whole sealed chunks.
            if let piece { pending += piece }
            if readNonce.isEmpty, pending.count >= 16 {
                readNonce = Array(pending[0 ..< 16])
                pending.removeFirst(16)
                openKey = AttachmentCases.Floor.payloadKey(fileKey: files.fileKey, nonce: readNonce)
            }
            while !openKey.isEmpty, pending.count >= chunk + 16 || (piece == nil && !pending.isEmpty) {
                let count = min(pending.count, chunk + 16)
                let chunkNonce = AttachmentCases.Floor.chunkNonce(index, final: index == chunks - 1)
                guard crypto_aead_chacha20poly1305_ietf_decrypt(
                    &opened, nil, nil, pending, UInt64(count), nil, 0, chunkNonce, openKey) == 0
                else { throw CheckFailure("floor: chunk \(index) does not verify") }
                opened.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[0 ..< count - 16])) }
                pending.removeFirst(count)
                index += 1
            }
        }
        guard index == chunks else { throw CheckFailure("floor: \(index) chunks, expected \(chunks)") }
    }
}
