/// The two base64 forms of age (RFC 4648 §4 alphabet): the header's unpadded, canonical
/// base64 (no `=`; the unused bits of the last character must be zero; no line breaks), and
/// the armor's padded, canonical base64.
enum AgeBase64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The 6-bit value of each byte, or 0xFF for bytes outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// Whether `byte` is one of the 64 characters.
    static func isAlphabet(_ byte: UInt8) -> Bool { values[Int(byte)] != 0xFF }

    /// Unpadded base64 of `bytes`.
    static func encodeUnpadded(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let v = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(v >> 18 & 63)]); out.append(alphabet[Int(v >> 12 & 63)])
            out.append(alphabet[Int(v >> 6 & 63)]); out.append(alphabet[Int(v & 63)])
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let v = UInt32(bytes[index]) << 16
            out.append(alphabet[Int(v >> 18 & 63)]); out.append(alphabet[Int(v >> 12 & 63)])
        case 2:
            let v = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out.append(alphabet[Int(v >> 18 & 63)]); out.append(alphabet[Int(v >> 12 & 63)])
            out.append(alphabet[Int(v >> 6 & 63)])
        default: break
        }
        return out
    }

    /// Unpadded base64 of `bytes` as a `String`.
    static func encodeUnpadded(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.withUnsafeBytes { encodeUnpadded($0) }, as: UTF8.self)
    }

    /// Padded base64 of `bytes` (the armor's form).
    static func encodePadded(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var out = encodeUnpadded(bytes)
        while out.count % 4 != 0 { out.append(UInt8(ascii: "=")) }
        return out
    }

    /// Decodes canonical unpadded base64: only alphabet characters (no `=`, no whitespace), a
    /// length that is not 1 more than a multiple of 4, and zero unused bits in the last
    /// character. `nil` for anything else.
    static func decodeUnpadded<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        let count = text.count
        guard count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Canonical: the bits left over (2 or 4) must be zero.
        guard accumulator == 0 else { return nil }
        return out
    }

    /// Decodes canonical unpadded base64 from a `String`.
    static func decodeUnpadded(_ text: String) -> [UInt8]? { decodeUnpadded(Array(text.utf8)) }

    /// Decodes canonical padded base64 (the armor's lines): a length that is a multiple of 4,
    /// `=` only as the last one or two characters of a group that needs them, zero unused bits.
    static func decodePadded<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8, C.Index == Int {
        let count = text.count
        guard count % 4 == 0 else { return nil }
        var padding = 0
        if count >= 1, text[text.endIndex - 1] == UInt8(ascii: "=") { padding = 1 }
        if count >= 2, padding == 1, text[text.endIndex - 2] == UInt8(ascii: "=") { padding = 2 }
        return decodeUnpadded(text[text.startIndex ..< text.endIndex - padding])
    }
}
