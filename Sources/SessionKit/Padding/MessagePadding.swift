import SignalPrimitives

/// Message padding of SPEC §2: `type || plaintext || Z || u32(len(Z))`, where the total is the
/// smallest bucket (64 … 65536 bytes) that holds `n + 5` bytes, or a multiple of 65536 above that.
///
/// The first byte is a content type, authenticated with the rest of the padded plaintext:
/// 0x01 for application content (every message, group message and self-encrypted blob), 0x02
/// for a sender-key distribution sent inside a pairwise session (SPEC §5). Unpadding takes
/// the type the caller expects and refuses any other first byte, so a distribution relabelled
/// as a message (or the reverse) is `invalidPadding`; the other type bytes are reserved and
/// always refused.
@_spi(Testing) public enum MessagePadding {
    /// The content type of a padded plaintext: its first byte (SPEC §2).
    public enum ContentType: UInt8, Sendable, Hashable, CaseIterable {
        /// 0x01: application content, the only type SPEC §2's plain unpadding accepts.
        case application = 0x01
        /// 0x02: a sender-key distribution (SPEC §5) inside a pairwise session, unpadded only
        /// where a distribution is processed.
        case senderKeyDistribution = 0x02
    }

    /// The padded sizes, smallest first.
    public static let buckets: [Int] = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
    /// Bytes added besides the zero fill: the content-type byte and the 4-byte fill length.
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

    /// Writes `type || plaintext || Z || u32(fillCount)` into `output`, which is zeroed and
    /// exactly `plaintext.count + fillCount + 5` bytes long (`fillCount` fits in 32 bits).
    @inline(__always)
    static func write(
        _ plaintext: UnsafeRawBufferPointer, fillCount: Int, contentType: ContentType = .application,
        into output: UnsafeMutableRawBufferPointer
    ) {
        output[0] = contentType.rawValue
        output.slice(1 ..< 1 + plaintext.count).copyMemory(from: plaintext)
        let fill = UInt32(truncatingIfNeeded: fillCount)
        let end = output.count
        output[end - 4] = UInt8(truncatingIfNeeded: fill >> 24)
        output[end - 3] = UInt8(truncatingIfNeeded: fill >> 16)
        output[end - 2] = UInt8(truncatingIfNeeded: fill >> 8)
        output[end - 1] = UInt8(truncatingIfNeeded: fill)
    }

    /// Pads `plaintext` with `contentType` as its first byte.
    /// - Throws: `SessionError.invalidMessage` when the fill length would not fit in 32 bits.
    public static func pad(_ plaintext: [UInt8], contentType: ContentType = .application) throws(SessionError) -> [UInt8] {
        let total = try checkedPaddedLength(forPlaintextCount: plaintext.count)
        let fill = total - plaintext.count - overhead
        var out = [UInt8]()
        out.reserveCapacity(total)
        out.append(contentType.rawValue)
        out.append(contentsOf: plaintext)
        out.append(contentsOf: repeatElement(0, count: fill))
        out.appendBigEndian(UInt32(fill))
        return out
    }

    /// The range of the plaintext inside `padded`, after the checks of SPEC §2 with
    /// `contentType` as the expected first byte.
    /// - Throws: `SessionError.invalidPadding` for fewer than 5 bytes, a first byte other than
    ///   `contentType` (another type, or a reserved one), or a fill length longer than the
    ///   space available.
    public static func plaintextRange(
        in padded: UnsafeRawBufferPointer, contentType: ContentType = .application
    ) throws(SessionError) -> Range<Int> {
        let n = padded.count
        guard n >= overhead, padded[0] == contentType.rawValue else { throw .invalidPadding }
        let fill = UInt64(padded[n - 4]) << 24 | UInt64(padded[n - 3]) << 16 | UInt64(padded[n - 2]) << 8 | UInt64(padded[n - 1])
        guard fill <= UInt64(n - overhead) else { throw .invalidPadding }
        return 1 ..< (n - 4 - Int(fill))
    }

    /// Removes the padding of SPEC §2, expecting `contentType` as the first byte. The content
    /// of the zero fill is not checked.
    /// - Throws: `SessionError.invalidPadding` when `padded` is not valid padding or its content
    ///   type is not `contentType`.
    public static func unpad(_ padded: [UInt8], contentType: ContentType = .application) throws(SessionError) -> [UInt8] {
        let result: Result<Range<Int>, SessionError> = padded.withUnsafeBytes { buffer in
            Result { () throws(SessionError) -> Range<Int> in try plaintextRange(in: buffer, contentType: contentType) }
        }
        return Array(padded[try result.get()])
    }
}
