/// Strict UTF-8 validation (Unicode 15, table 3-7 "Well-Formed UTF-8 Byte Sequences"):
/// rejects overlong encodings, encoded surrogates (U+D800–U+DFFF), code points above
/// U+10FFFF, stray continuation bytes and truncated sequences. The standard library's
/// `String(decoding:as:)` repairs such input instead of rejecting it.
enum StrictUTF8 {
    /// Whether `bytes` is well-formed UTF-8.
    static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        while let lead = iterator.next() {
            let continuationCount: Int
            var secondRange: ClosedRange<UInt8> = 0x80 ... 0xBF
            switch lead {
            case 0x00 ... 0x7F: continue
            case 0xC2 ... 0xDF: continuationCount = 1
            case 0xE0: continuationCount = 2; secondRange = 0xA0 ... 0xBF
            case 0xE1 ... 0xEC, 0xEE ... 0xEF: continuationCount = 2
            case 0xED: continuationCount = 2; secondRange = 0x80 ... 0x9F
            case 0xF0: continuationCount = 3; secondRange = 0x90 ... 0xBF
            case 0xF1 ... 0xF3: continuationCount = 3
            case 0xF4: continuationCount = 3; secondRange = 0x80 ... 0x8F
            default: return false // 0x80–0xC1 (continuation or overlong lead), 0xF5–0xFF
            }
            guard let second = iterator.next(), secondRange.contains(second) else { return false }
            for _ in 1 ..< continuationCount {
                guard let next = iterator.next(), (0x80 ... 0xBF).contains(next) else { return false }
            }
        }
        return true
    }
}
