// Harness `age_armor`: age's ASCII armor (strict PEM, age.md).
//
// Input: a mode byte, then (mode even) armored text, or (mode odd) bytes to armor and a
// variation of the allowed kind.
//
// Invariants: a decoded input re-armors to itself up to what the armor allows (CRLF line ends,
// whitespace before and after the block, a missing final LF): armor(dearmor(x)) equals x with
// CRLF turned into LF, surrounding whitespace trimmed and one LF added; a refused input fails
// with `AgeError.armor` only. Every armored byte string, with allowed variations, decodes to
// itself, and with a disallowed one (an extra space in a line, a line too long, a missing
// END line, data after it) is refused.
@_spi(Testing) import SessionKit
@_spi(Testing) import SessionKitAge
import SignalPrimitives

enum Harness {
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09 ... 0x0D).contains(byte) }

    static func normalized(_ input: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < input.count {
            if input[index] == 0x0D, index + 1 < input.count, input[index + 1] == 0x0A { index += 1; continue }
            out.append(input[index])
            index += 1
        }
        while let first = out.first, isWhitespace(first) { out.removeFirst() }
        while let last = out.last, isWhitespace(last) { out.removeLast() }
        return out + [0x0A]
    }

    static func decode(_ text: [UInt8]) -> [UInt8]? {
        do throws(AgeError) {
            return try AgeTesting.dearmor(text)
        } catch {
            guard case .armor = error else { fail("dearmor threw \(error), not an armor failure") }
            return nil
        }
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        if mode % 2 == 0 {
            let text = input.rest()
            if let decoded = decode(text) {
                invariant(AgeTesting.armor(decoded) == normalized(text), "an accepted armor does not re-encode to its normalised text")
            }
            return
        }
        let variation = input.byte()
        let leading = Int(input.byte() % 8), trailing = Int(input.byte() % 8)
        let payload = input.rest()
        var text = AgeTesting.armor(payload)
        invariant(decode(text) == payload, "an armor made by the encoder does not decode to its bytes")
        var lines = text.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        lines.removeLast()   // the empty string after the final LF
        switch variation % 8 {
        case 0:   // CRLF on every line, whitespace around the block: allowed
            text = [UInt8](repeating: 0x20, count: leading) + [0x0A] + lines.map { $0 + [0x0D, 0x0A] }.joined() + [UInt8](repeating: 0x09, count: trailing)
            invariant(decode(text) == payload, "an allowed variation was refused")
        case 1:   // no final LF: allowed
            text.removeLast()
            invariant(decode(text) == payload, "an armor without its final LF was refused")
        case 2:   // a space at the end of a line: refused
            let line = Int(input.byte()) % lines.count
            lines[line].append(0x20)
            invariant(decode(lines.map { $0 + [0x0A] }.joined().map { $0 }) == nil, "a line with a trailing space was accepted")
        case 3:   // the END line missing: refused
            invariant(decode(lines.dropLast().map { $0 + [0x0A] }.joined().map { $0 }) == nil, "an armor without END was accepted")
        case 4:   // data after END: refused
            invariant(decode(text + [0x41 + variation % 26]) == nil, "data after END was accepted")
        case 5:   // an empty line inside: refused
            let at = 1 + Int(input.byte()) % (lines.count - 1)
            lines.insert([], at: at)
            invariant(decode(lines.map { $0 + [0x0A] }.joined().map { $0 }) == nil, "an empty line inside was accepted")
        case 6:   // lowercase BEGIN: refused
            lines[0] = Array(String(decoding: lines[0], as: UTF8.self).lowercased().utf8)
            invariant(decode(lines.map { $0 + [0x0A] }.joined().map { $0 }) == nil, "a lowercase BEGIN line was accepted")
        default:  // two lines joined (a line over 64 columns unless both are short): refused unless the result is still canonical
            if lines.count > 3 {
                let joined = Array(lines[0 ..< 1]) + [lines[1] + lines[2]] + Array(lines[3...])
                invariant(decode(joined.map { $0 + [0x0A] }.joined().map { $0 }) == nil, "joined lines were accepted")
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for count in [0, 1, 47, 48, 49, 96, 200] {
            seeds.append([0] + AgeTesting.armor(fixedBytes(count, seed: UInt64(count))))
            seeds.append([1, UInt8(count % 8), 2, 3] + fixedBytes(count, seed: UInt64(count)))
        }
        seeds.append([0] + Array("  \n-----BEGIN AGE ENCRYPTED FILE-----\r\nQUJD\r\n-----END AGE ENCRYPTED FILE-----\r\n \n".utf8))
        return seeds
    }
}
