/// Byte helpers shared by the naive references.
extension Array where Element == UInt8 {
    /// Appends `value` as 4 big-endian bytes.
    mutating func appendU32(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends `value` as 8 big-endian bytes.
    mutating func appendU64(_ value: UInt64) {
        appendU32(UInt32(truncatingIfNeeded: value >> 32))
        appendU32(UInt32(truncatingIfNeeded: value))
    }

    /// The big-endian u32 at `offset` (the caller checked the length).
    func u32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8
            | UInt32(self[offset + 3])
    }
}

/// A growable scratch buffer for intermediate bytes (padded plaintexts, derived keys), reused
/// across operations so that the references allocate only their outputs.
final class ScratchBuffer {
    private(set) var bytes: UnsafeMutableRawBufferPointer

    init(count: Int) {
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { bytes.deallocate() }

    /// The first `count` bytes, growing the buffer when needed.
    func prefix(_ count: Int) -> UnsafeMutableRawBufferPointer {
        if count > bytes.count {
            bytes.deallocate()
            bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
        }
        return UnsafeMutableRawBufferPointer(rebasing: bytes[0..<count])
    }

    /// `count` bytes starting at `offset`, growing the buffer when needed.
    func slice(_ offset: Int, _ count: Int) -> UnsafeMutableRawBufferPointer {
        let all = prefix(offset + count)
        return UnsafeMutableRawBufferPointer(rebasing: all[offset..<(offset + count)])
    }
}

/// SPEC §2 padding, written naively.
enum ReferencePadding {
    static let buckets = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]

    /// The padded length of an `n`-byte plaintext.
    static func paddedCount(_ n: Int) -> Int {
        let needed = n + 5
        if let bucket = buckets.first(where: { $0 >= needed }) { return bucket }
        return (needed + 65535) / 65536 * 65536
    }

    /// Writes `0x01 || plaintext || Z || u32(len(Z))` into `output` (paddedCount bytes).
    static func pad(_ plaintext: [UInt8], into output: UnsafeMutableRawBufferPointer) {
        let total = output.count
        let zeros = total - plaintext.count - 5
        output[0] = 0x01
        UnsafeMutableRawBufferPointer(rebasing: output[1..<(1 + plaintext.count)]).copyBytes(from: plaintext)
        UnsafeMutableRawBufferPointer(rebasing: output[(1 + plaintext.count)..<(total - 4)])
            .initializeMemory(as: UInt8.self, repeating: 0)
        let length = UInt32(zeros)
        output[total - 4] = UInt8(truncatingIfNeeded: length >> 24)
        output[total - 3] = UInt8(truncatingIfNeeded: length >> 16)
        output[total - 2] = UInt8(truncatingIfNeeded: length >> 8)
        output[total - 1] = UInt8(truncatingIfNeeded: length)
    }

    /// The plaintext inside padded bytes, or `invalidPadding`.
    static func unpad(_ padded: UnsafeRawBufferPointer) throws(ReferenceError) -> [UInt8] {
        let count = padded.count
        guard count >= 5, padded[0] == 0x01 else { throw .invalidPadding }
        let zeros = Int(UInt32(padded[count - 4]) << 24 | UInt32(padded[count - 3]) << 16
                        | UInt32(padded[count - 2]) << 8 | UInt32(padded[count - 1]))
        guard zeros <= count - 5 else { throw .invalidPadding }
        return Array(padded[1..<(count - 4 - zeros)])
    }
}

/// Whether 32 bytes are a canonical X25519 public key: bit 255 clear and u < 2^255 − 19.
func isCanonicalX25519(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard bytes.count == 32, bytes[31] & 0x80 == 0 else { return false }
    guard bytes[31] == 0x7f else { return true }
    for i in 1...30 where bytes[i] != 0xff { return true }
    return bytes[0] < 0xed
}

/// Whether the y-coordinate of a 32-byte Ed25519 encoding (sign bit ignored) is below 2^255 − 19,
/// as libsodium's `ge25519_is_canonical` decides.
func isCanonicalEdwardsY(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard bytes.count == 32 else { return false }
    guard bytes[31] & 0x7f == 0x7f else { return true }
    for i in 1...30 where bytes[i] != 0xff { return true }
    return bytes[0] < 0xed
}
