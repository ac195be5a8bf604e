/// Checks that a text is exactly one JSON object (RFC 8259) in which no object repeats a key,
/// no key holds an escape and every number is a canonical integer, before `JSONDecoder` reads
/// it: Foundation's decoder silently takes the first of two equal keys, and reads `1.0`, `1e0`
/// and `-0` as the integers 1 and 0, so two readers could see two different messages in one
/// envelope, and one envelope would have several texts.
struct StrictJSONScanner {
    /// Why the text was refused (mapped to `EnvelopeError`).
    enum Failure: Error {
        case syntax
    }

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    /// Nesting deeper than this is refused (an envelope nests two levels).
    private static let maximumDepth = 16

    /// Throws `EnvelopeError.notAJSONObject`, `.repeatedField` for a repeated key, or
    /// `.invalidField` (naming the innermost field it is in) for a number that is not a
    /// canonical integer (`-?(0|[1-9][0-9]*)`, and not `-0`), unless `bytes` is one JSON object
    /// with unique keys and canonical integers.
    static func checkObject(_ bytes: [UInt8]) throws {
        var scanner = StrictJSONScanner(bytes: bytes)
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else { throw EnvelopeError.notAJSONObject }
        try scanner.value(in: nil)
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw EnvelopeError.notAJSONObject }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func next() throws -> UInt8 {
        guard index < bytes.count else { throw Failure.syntax }
        defer { index += 1 }
        return bytes[index]
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard try next() == byte else { throw Failure.syntax }
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    /// A value of the field `field` (the innermost key it is under; `nil` at the top).
    private mutating func value(in field: [UInt8]?) throws {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "{"): try object()
        case UInt8(ascii: "["): try array(in: field)
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: try number(in: field)
        }
    }

    private mutating func nested(_ body: (inout StrictJSONScanner) throws -> Void) throws {
        depth += 1
        guard depth <= Self.maximumDepth else { throw Failure.syntax }
        try body(&self)
        depth -= 1
    }

    private mutating func object() throws {
        try nested { scanner in
            try scanner.expect(UInt8(ascii: "{"))
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "}") { scanner.index += 1; return }
            var keys = Set<[UInt8]>()
            while true {
                scanner.skipWhitespace()
                let key = try scanner.string()
                // Field names are plain ASCII: an escape in a key could spell a known key twice.
                guard !key.contains(UInt8(ascii: "\\")) else { throw EnvelopeError.notAJSONObject }
                guard keys.insert(key).inserted else {
                    throw EnvelopeError.repeatedField(String(decoding: key, as: UTF8.self))
                }
                scanner.skipWhitespace()
                try scanner.expect(UInt8(ascii: ":"))
                try scanner.value(in: key)
                scanner.skipWhitespace()
                switch try scanner.next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "}"): return
                default: throw Failure.syntax
                }
            }
        }
    }

    private mutating func array(in field: [UInt8]?) throws {
        try nested { scanner in
            try scanner.expect(UInt8(ascii: "["))
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "]") { scanner.index += 1; return }
            while true {
                try scanner.value(in: field)
                scanner.skipWhitespace()
                switch try scanner.next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "]"): return
                default: throw Failure.syntax
                }
            }
        }
    }

    /// A string's raw bytes between the quotes, escapes kept as written (keys with escapes are
    /// refused by `object()`, so raw bytes compare keys exactly).
    private mutating func string() throws -> [UInt8] {
        try expect(UInt8(ascii: "\""))
        let start = index
        while true {
            let byte = try next()
            switch byte {
            case UInt8(ascii: "\""): return Array(bytes[start ..< index - 1])
            case UInt8(ascii: "\\"):
                let escaped = try next()
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    for _ in 0 ..< 4 {
                        let hex = try next()
                        guard (0x30 ... 0x39).contains(hex) || (0x41 ... 0x46).contains(hex) || (0x61 ... 0x66).contains(hex) else {
                            throw Failure.syntax
                        }
                    }
                default: throw Failure.syntax
                }
            case 0x00 ..< 0x20: throw Failure.syntax
            default: break
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        for byte in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) { try expect(byte) }
    }

    /// A number, which must be a canonical integer: an optional minus, then 0 or digits not
    /// starting with 0; no fraction, no exponent, no `-0`. A JSON number that is not one
    /// (`1.0`, `1e0`, `01`, `-0`) is `EnvelopeError.invalidField(field)`; what is not a JSON
    /// number at all is a syntax error.
    private mutating func number(in field: [UInt8]?) throws {
        let invalid = EnvelopeError.invalidField(field.map { String(decoding: $0, as: UTF8.self) } ?? "envelope")
        let negative = peek() == UInt8(ascii: "-")
        if negative { index += 1 }
        guard let first = peek(), (0x30 ... 0x39).contains(first) else { throw Failure.syntax }
        index += 1
        if first == 0x30 {
            // A leading zero (`01`) or a negative zero.
            if let next = peek(), (0x30 ... 0x39).contains(next) { throw invalid }
            if negative { throw invalid }
        } else {
            digits()
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard try requireDigit() else { throw Failure.syntax }
            throw invalid
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard try requireDigit() else { throw Failure.syntax }
            throw invalid
        }
    }

    private mutating func requireDigit() throws -> Bool {
        guard let byte = peek(), (0x30 ... 0x39).contains(byte) else { return false }
        index += 1
        return true
    }

    private mutating func digits() {
        while let byte = peek(), (0x30 ... 0x39).contains(byte) { index += 1 }
    }
}
