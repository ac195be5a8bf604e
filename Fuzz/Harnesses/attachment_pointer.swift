// Harness `attachment_pointer`: the attachment pointer codec and decryption (SPEC §10).
//
// Input: a mode byte, then (mode even) pointer bytes, or (mode odd) a recipe: a content length,
// a key and nonce seed, an operation on the ciphertext (none, truncate, append, flip a byte,
// swap two chunks), whether the pointer carries the damaged ciphertext's digest, and a range.
//
// Invariants: decoding fails exactly as SPEC §10 says (empty invalidPayload; first byte other
// than 0x28 unsupportedVersion; another length than 57 invalidPayload); a decoded pointer
// re-encodes to its bytes, with the key, digest and length at their offsets. Recipe mode: the
// unchanged ciphertext decrypts to its content (Data and random access); a changed one fails
// with invalidMessage in the whole-file API; random access never returns bytes other than
// the content's, and fails only with invalidMessage.
@_spi(Testing) import SessionKit
import SignalPrimitives
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

enum Harness {
    static func expectedError(_ bytes: [UInt8]) -> SessionError? {
        guard let first = bytes.first else { return .invalidPayload }
        guard first == 0x28 else { return .unsupportedVersion }
        return bytes.count == 57 ? nil : .invalidPayload
    }

    static func decodeMode(_ bytes: [UInt8]) {
        let expected = expectedError(bytes)
        do throws(SessionError) {
            let pointer = try AttachmentPointer(serialized: bytes)
            invariant(expected == nil, "decoded a pointer SPEC §10 rejects")
            invariant(pointer.serialized() == bytes, "a pointer does not re-encode to its bytes")
            invariant(pointer.fileKey.withUnsafeBytes { Array($0) } == Array(bytes[1 ..< 17]), "the key is not bytes 1..<17")
            invariant(pointer.ciphertextDigest == Array(bytes[17 ..< 49]), "the digest is not bytes 17..<49")
            invariant(pointer.contentLength == bytes[49...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, "the length is not u64 at 49")
            // Any ciphertext is refused under a decoded pointer (the fuzzer cannot forge one).
            do throws(SessionError) {
                _ = try Attachment.decrypt(Data(bytes), pointer: pointer)
                fail("a ciphertext made of pointer bytes decrypted")
            } catch {
                invariant(error == .invalidMessage, "decrypt threw \(error)")
            }
        } catch {
            invariant(error == expected, "decode threw \(error), expected \(String(describing: expected))")
        }
    }

    static func recipeMode(_ input: inout FuzzInput) {
        let length = Int(input.u16()) * Int(input.byte() % 4 + 1)
        let seed = UInt64(input.u32())
        let operation = input.byte() % 5
        let argument = Int(input.u32())
        let digestOfDamaged = input.byte() % 2 == 0
        let rangeStart = UInt64(input.u32()) % UInt64(length + 10)
        let rangeCount = Int(input.u16())
        let content = fixedBytes(length, seed: seed)
        let encryptor = must { try AttachmentEncryptor(fileKey: AgeFileKey(using: FixedRandomSource(bytes: fixedBytes(16, seed: seed ^ 1))),
                                                        nonce: fixedBytes(16, seed: seed ^ 2)) }
        var ciphertext: [UInt8] = []
        must { try content.withBytes { (b: UnsafeRawBufferPointer) throws(SessionError) in try encryptor.update(b) { ciphertext += $0 } } }
        let pointer = must { try encryptor.finish { ciphertext += $0 } }
        var damaged = ciphertext
        switch operation {
        case 1: damaged.removeSubrange((argument % damaged.count)...)
        case 2: damaged += fixedBytes(argument % 70000 + 1, seed: seed)
        case 3: damaged[argument % damaged.count] ^= UInt8(truncatingIfNeeded: argument >> 24) | 1
        case 4:
            let chunks = stride(from: 16, to: damaged.count, by: 65552).map { Array(damaged[$0 ..< min($0 + 65552, damaged.count)]) }
            var reordered = chunks
            reordered.swapAt(argument % chunks.count, (argument >> 8) % chunks.count)
            damaged = Array(damaged[0 ..< 16]) + reordered.flatMap { $0 }
        default: break
        }
        let changed = damaged != ciphertext
        let usedPointer = digestOfDamaged && changed
            ? must { try AttachmentPointer(fileKey: pointer.fileKey, ciphertextDigest: SHA256.hash(damaged), contentLength: UInt64(length)) }
            : pointer
        do throws(SessionError) {
            let opened = try Attachment.decrypt(Data(damaged), pointer: usedPointer)
            invariant(!changed, "a changed ciphertext decrypted")
            invariant([UInt8](opened) == content, "the content differs")
        } catch {
            invariant(changed, "the unchanged ciphertext failed: \(error)")
            invariant(error == .invalidMessage, "decrypt threw \(error)")
        }
        do throws(SessionError) {
            let reader = try AttachmentReader(ciphertext: Data(damaged), pointer: usedPointer)
            let bytes = try reader.read(offset: rangeStart, count: rangeCount)
            let start = min(Int(rangeStart), length)
            invariant([UInt8](bytes) == Array(content[start ..< min(start + rangeCount, length)]), "random access returned other bytes")
        } catch {
            invariant(changed, "random access on the unchanged ciphertext failed: \(error)")
            invariant(error == .invalidMessage, "random access threw \(error)")
        }
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        if input.byte() % 2 == 0 {
            decodeMode(input.rest())
        } else {
            recipeMode(&input)
        }
    }

    static func seeds() -> [[UInt8]] {
        let encrypted = must { try Attachment.encrypt(Data(fixedBytes(1000, seed: 1)), using: FixedRandomSource(bytes: fixedBytes(32, seed: 2))) }
        let pointer = encrypted.pointer.serialized()
        return [
            [0] + pointer, [0], [0, 0x28], [0] + pointer.dropLast(), [0, 0x27] + pointer.dropFirst(),
            [1, 0, 100, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10],
            [1, 0x40, 0, 3, 0, 0, 0, 7, 3, 0, 1, 0, 5, 0, 0, 0, 0, 0, 0x40],
            [1, 0x80, 0, 3, 0, 0, 0, 9, 4, 0, 0, 1, 2, 0, 0, 0, 0, 0, 1, 0, 0],
        ]
    }
}
