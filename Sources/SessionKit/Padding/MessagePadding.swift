import SignalPrimitives

/// Message padding of SPEC §2: `0x01 || plaintext || Z || u32(len(Z))`, where the total is the
/// smallest bucket (64 … 65536 bytes) that holds `n + 5` bytes, or a multiple of 65536 above that.
@_spi(Testing) public enum MessagePadding {
    /// The padded sizes, smallest first.
    public static let buckets: [Int] = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
    /// Bytes added besides the zero fill: the 0x01 marker and the 4-byte fill length.
    public static let overhead = 5

    /// The padded length for a plaintext of `count` bytes.
    public static func paddedLength(forPlaintextCount count: Int) -> Int {
        let needed = count + overhead
        if let bucket = buckets.first(where: { $0 >= needed }) { return bucket }
        return (needed + 65535) / 65536 * 65536
    }

    /// The padded length for a plaintext of `count` bytes, when its fill length fits in 32 bits.
    /// - Throws: `SessionError.invalidMessage` when the fill length would not fit in 32 bits.
    static func checkedPaddedLength(forPlaintextCount count: Int) throws(SessionError) -> Int {
        let total = paddedLength(forPlaintextCount: count)
        guard UInt64(total - count - overhead) <= UInt64(UInt32.max) else { throw .invalidMessage }
        return total
    }

    /// Writes `0x01 || plaintext || Z || u32(fillCount)` into `output`, which is zeroed and
    /// exactly `plaintext.count + fillCount + 5` bytes long (`fillCount` fits in 32 bits).
    @inline(__always)
    static func write(_ plaintext: UnsafeRawBufferPointer, fillCount: Int, into output: UnsafeMutableRawBufferPointer) {
        output[0] = 0x01
        output.slice(1 ..< 1 + plaintext.count).copyMemory(from: plaintext)
        let fill = UInt32(truncatingIfNeeded: fillCount)
        let end = output.count
        output[end - 4] = UInt8(truncatingIfNeeded: fill >> 24)
        output[end - 3] = UInt8(truncatingIfNeeded: fill >> 16)
        output[end - 2] = UInt8(truncatingIfNeeded: fill >> 8)
        output[end - 1] = UInt8(truncatingIfNeeded: fill)
    }

    /// Pads `plaintext`.
    /// - Throws: `SessionError.invalidMessage` when the fill length would not fit in 32 bits.
    public static func pad(_ plaintext: [UInt8]) throws(SessionError) -> [UInt8] {
        let total = try checkedPaddedLength(forPlaintextCount: plaintext.count)
        let fill = total - plaintext.count - overhead
        var out = [UInt8]()
        out.reserveCapacity(total)
        out.append(0x01)
        out.append(contentsOf: plaintext)
        out.append(contentsOf: repeatElement(0, count: fill))
        out.appendBigEndian(UInt32(fill))
        return out
    }

    /// The range of the plaintext inside `padded`, after the checks of SPEC §2.
    /// - Throws: `SessionError.invalidPadding` for fewer than 5 bytes, a first byte other than
    ///   0x01, or a fill length longer than the space available.
    public static func plaintextRange(in padded: UnsafeRawBufferPointer) throws(SessionError) -> Range<Int> {
        let n = padded.count
        guard n >= overhead, padded[0] == 0x01 else { throw .invalidPadding }
        let fill = UInt64(padded[n - 4]) << 24 | UInt64(padded[n - 3]) << 16 | UInt64(padded[n - 2]) << 8 | UInt64(padded[n - 1])
        guard fill <= UInt64(n - overhead) else { throw .invalidPadding }
        return 1 ..< (n - 4 - Int(fill))
    }

    /// Removes the padding of SPEC §2. The content of the zero fill is not checked.
    /// - Throws: `SessionError.invalidPadding` when `padded` is not valid padding.
    public static func unpad(_ padded: [UInt8]) throws(SessionError) -> [UInt8] {
        let result: Result<Range<Int>, SessionError> = padded.withUnsafeBytes { buffer in
            Result { () throws(SessionError) -> Range<Int> in try plaintextRange(in: buffer) }
        }
        return Array(padded[try result.get()])
    }
}
