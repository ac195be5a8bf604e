import BenchmarkHarness
import CSodiumBench
import Foundation
import SessionKit
import SignalPrimitives

/// `attachment.{encrypt,decrypt}.{64KiB,64MiB}` (SPEC §10): `Attachment.encrypt(_:using:)` and
/// `Attachment.decrypt(_:pointer:)` on `Data`, against the floor: the same age payload written
/// with raw libsodium calls (HKDF of the payload key, ChaCha20-Poly1305-IETF over each 64 KiB
/// chunk of the zero-padded content with the counter nonce, SHA-256 of the ciphertext). Both
/// sides use the same file key and nonce, so their pointers (key, digest, length) must be equal.
/// Target: ≤ 1.10 of the floor.
enum AttachmentCases {
    static let target = RatioTargets(floor: 1.10)
    static let chunk = 65536

    static var all: [BenchmarkCase] {
        [(64 * 1024, "64KiB"), (64 * 1024 * 1024, "64MiB")].flatMap { size, label -> [BenchmarkCase] in
            let fixture = Fixture(contentLength: size)
            return [
                .probing(
                    name: "attachment.encrypt.\(label)",
                    summary: "encrypt \(label) of content as an attachment: pad to padded(n), HKDF, ChaCha20-Poly1305 per 64 KiB chunk, SHA-256 of the ciphertext",
                    group: .protocol, targets: target,
                    library: { try library(encrypting: fixture) }, floor: { floor(encrypting: fixture) }, swiftCrypto: nil),
                .probing(
                    name: "attachment.decrypt.\(label)",
                    summary: "decrypt \(label) of attachment: length and SHA-256 checked, ChaCha20-Poly1305 open per chunk, the first n bytes",
                    group: .protocol, targets: target,
                    library: { try library(decrypting: fixture) }, floor: { try floor(decrypting: fixture) }, swiftCrypto: nil),
            ]
        }
    }

    /// The content, key, nonce and (from the floor) ciphertext of one size.
    final class Fixture: @unchecked Sendable {
        let contentLength: Int
        lazy var content: [UInt8] = { (0 ..< contentLength).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) } }()
        let fileKey: [UInt8] = (0 ..< 16).map { UInt8($0 &* 3 &+ 1) }
        let nonce: [UInt8] = (0 ..< 16).map { UInt8($0 &* 5 &+ 2) }
        lazy var encrypted: (ciphertext: [UInt8], pointer: [UInt8]) = Floor.encrypt(content, fileKey: fileKey, nonce: nonce)

        init(contentLength: Int) { self.contentLength = contentLength }
    }

    /// A random source that hands out the file key, then the nonce (what `AttachmentEncryptor`
    /// draws, in that order).
    struct Drawing: RandomSource {
        let bytes: [UInt8]
        final class Cursor: @unchecked Sendable { var offset = 0 }
        let cursor = Cursor()
        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            for index in buffer.indices {
                buffer[index] = bytes[cursor.offset % bytes.count]
                cursor.offset += 1
            }
        }
    }

    static func library(encrypting fixture: Fixture) throws -> Probe {
        let content = Data(fixture.content)
        func run() throws -> EncryptedAttachment {
            try Attachment.encrypt(content, using: Drawing(bytes: fixture.fileKey + fixture.nonce))
        }
        return Probe(workload: .repeating { blackHole(try run()) }, output: { try run().pointer.serialized() })
    }

    static func library(decrypting fixture: Fixture) throws -> Probe {
        let ciphertext = Data(fixture.encrypted.ciphertext)
        let pointer = try AttachmentPointer(serialized: fixture.encrypted.pointer)
        func run() throws -> Data { try Attachment.decrypt(ciphertext, pointer: pointer) }
        return Probe(workload: .repeating { blackHole(try run()) }, output: { SHA256.hash([UInt8](try run())) })
    }

    static func floor(encrypting fixture: Fixture) -> Probe {
        let content = fixture.content
        return Probe(
            workload: .repeating { blackHole(Floor.encrypt(content, fileKey: fixture.fileKey, nonce: fixture.nonce)) },
            output: { Floor.encrypt(content, fileKey: fixture.fileKey, nonce: fixture.nonce).pointer })
    }

    static func floor(decrypting fixture: Fixture) throws -> Probe {
        let (ciphertext, pointer) = fixture.encrypted
        return Probe(
            workload: .repeating { blackHole(try Floor.decrypt(ciphertext, pointer: pointer)) },
            output: {
                let content = try Floor.decrypt(ciphertext, pointer: pointer)
                var digest = [UInt8](repeating: 0, count: 32)
                crypto_hash_sha256(&digest, content, UInt64(content.count))
                return digest
            })
    }

    /// The floor: SPEC §10 with libsodium calls, composed the obvious way.
    enum Floor {
        static func padded(_ n: Int) -> Int {
            var bucket = 512
            while bucket < n { bucket += max(1, bucket / 20) }
            return bucket
        }

        static func payloadKey(fileKey: [UInt8], nonce: [UInt8]) -> [UInt8] {
            var key = [UInt8](repeating: 0, count: 32)
            let info = Array("payload".utf8)
            nonce.withUnsafeBytes { salt in
                fileKey.withUnsafeBytes { ikm in
                    info.withUnsafeBytes { i in
                        key.withUnsafeMutableBytes { SodiumBackend.hkdfSHA256(salt: salt, inputKeyMaterial: ikm, info: i, into: $0) }
                    }
                }
            }
            return key
        }

        static func chunkNonce(_ index: Int, final: Bool) -> [UInt8] {
            var nonce = [UInt8](repeating: 0, count: 12)
            for byte in 0 ..< 8 { nonce[3 + byte] = UInt8(truncatingIfNeeded: UInt64(index) >> UInt64(56 - 8 * byte)) }
            nonce[11] = final ? 1 : 0
            return nonce
        }

        static func encrypt(_ content: [UInt8], fileKey: [UInt8], nonce: [UInt8]) -> (ciphertext: [UInt8], pointer: [UInt8]) {
            _ = SodiumBackend.isReady
            let paddedCount = padded(content.count)
            let chunks = (paddedCount + chunk - 1) / chunk
            var plaintext = content
            plaintext.append(contentsOf: repeatElement(0, count: paddedCount - content.count))
            let key = payloadKey(fileKey: fileKey, nonce: nonce)
            var out = [UInt8](repeating: 0, count: 16 + paddedCount + 16 * chunks)
            out.replaceSubrange(0 ..< 16, with: nonce)
            out.withUnsafeMutableBytes { o in
                plaintext.withUnsafeBytes { p in
                    for index in 0 ..< chunks {
                        let start = index * chunk, length = min(chunk, paddedCount - start)
                        let chunkNonce = chunkNonce(index, final: index == chunks - 1)
                        _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                            o.u8 + 16 + index * (chunk + 16), nil, p.u8 + start, UInt64(length), nil, 0, nil, chunkNonce, key)
                    }
                }
            }
            var digest = [UInt8](repeating: 0, count: 32)
            crypto_hash_sha256(&digest, out, UInt64(out.count))
            var pointer: [UInt8] = [0x28] + fileKey + digest
            for shift in stride(from: 56, through: 0, by: -8) { pointer.append(UInt8(truncatingIfNeeded: UInt64(content.count) >> UInt64(shift))) }
            return (out, pointer)
        }

        static func decrypt(_ ciphertext: [UInt8], pointer: [UInt8]) throws -> [UInt8] {
            let n = pointer[49...].reduce(0) { $0 << 8 | Int($1) }
            let paddedCount = padded(n)
            let chunks = (paddedCount + chunk - 1) / chunk
            guard ciphertext.count == 16 + paddedCount + 16 * chunks else { throw CheckFailure("wrong length") }
            var digest = [UInt8](repeating: 0, count: 32)
            crypto_hash_sha256(&digest, ciphertext, UInt64(ciphertext.count))
            guard sodium_memcmp(digest, Array(pointer[17 ..< 49]), 32) == 0 else { throw CheckFailure("wrong digest") }
            let key = payloadKey(fileKey: Array(pointer[1 ..< 17]), nonce: Array(ciphertext[0 ..< 16]))
            var out = [UInt8](repeating: 0, count: paddedCount)
            try out.withUnsafeMutableBytes { o in
                try ciphertext.withUnsafeBytes { c in
                    for index in 0 ..< chunks {
                        let start = index * chunk, length = min(chunk, paddedCount - start)
                        let chunkNonce = chunkNonce(index, final: index == chunks - 1)
                        guard crypto_aead_chacha20poly1305_ietf_decrypt(
                            o.u8 + start, nil, nil, c.u8 + 16 + index * (chunk + 16), UInt64(length + 16), nil, 0, chunkNonce, key) == 0
                        else { throw CheckFailure("a chunk does not verify") }
                    }
                }
            }
            out.removeSubrange(n...)
            return out
        }
    }
}
