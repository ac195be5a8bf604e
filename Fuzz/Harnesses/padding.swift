// Harness `padding`: SPEC §2 message padding, with its content types (the first byte: 0x01
// application content, 0x02 a sender-key distribution; every other value reserved).
//
// Input: a mode byte, then the data.
//   even mode: the data is a padded buffer. `MessagePadding.unpad`, expecting each content
//              type in turn, must agree with the reference reading of SPEC §2 below (same
//              plaintext, or `invalidPadding` for exactly the buffers the reference rejects
//              for that type); any other error traps.
//   odd mode:  the data is a plaintext (mode bit 1 set: extended with zeros to a length taken
//              from the next three bytes, up to 200,000, to reach the multiple-of-65536
//              rule), padded with content type 0x02 when mode bit 2 is set and 0x01
//              otherwise. `pad` must give the SPEC layout and length with that type byte,
//              `unpad` with that type must give the plaintext back, and `unpad` with the
//              other type must be `invalidPadding`.
@_spi(Testing) import SessionKit

enum Harness {
    static let buckets = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]

    /// SPEC §2 unpadding expecting content type `type`, written from the text and independent
    /// of the library.
    static func referenceUnpad(_ padded: [UInt8], type: UInt8) -> [UInt8]? {
        let length = padded.count
        guard length >= 5, padded[0] == type else { return nil }
        let fill = padded[(length - 4)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard fill <= UInt64(length - 5) else { return nil }
        return Array(padded[1 ..< (length - 4 - Int(fill))])
    }

    /// SPEC §2's padded length for an n-byte plaintext.
    static func referenceTotal(_ n: Int) -> Int {
        if let bucket = buckets.first(where: { $0 >= n + 5 }) { return bucket }
        return (n + 5 + 65535) / 65536 * 65536
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        if mode & 1 == 0 {
            let padded = input.rest()
            for type in MessagePadding.ContentType.allCases { checkUnpad(padded, type: type) }
        } else {
            var plaintext: [UInt8]
            if mode & 2 != 0 {
                let length = Int(input.byte()) << 16 | Int(input.u16())
                plaintext = input.rest()
                plaintext += [UInt8](repeating: 0, count: max(0, min(length, 200_000) - plaintext.count))
            } else {
                plaintext = input.rest()
            }
            checkPad(plaintext, type: mode & 4 != 0 ? .senderKeyDistribution : .application)
        }
    }

    static func checkUnpad(_ padded: [UInt8], type: MessagePadding.ContentType) {
        let expected = referenceUnpad(padded, type: type.rawValue)
        do {
            let plaintext = try MessagePadding.unpad(padded, contentType: type)
            invariant(expected == plaintext, "unpad accepted a buffer the SPEC rejects, or returned another plaintext")
        } catch {
            invariant(error == .invalidPadding, "unpad threw \(error), not invalidPadding")
            invariant(expected == nil, "unpad rejected a buffer that SPEC §2 accepts")
        }
    }

    static func checkPad(_ plaintext: [UInt8], type: MessagePadding.ContentType) {
        let padded: [UInt8]
        do {
            padded = try MessagePadding.pad(plaintext, contentType: type)
        } catch {
            fail("pad threw \(error) for \(plaintext.count) bytes")
        }
        let total = referenceTotal(plaintext.count)
        invariant(padded.count == total, "padded length \(padded.count), SPEC says \(total)")
        invariant(MessagePadding.paddedLength(forPlaintextCount: plaintext.count) == total, "paddedLength disagrees with SPEC")
        let fill = total - plaintext.count - 5
        invariant(padded[0] == type.rawValue, "first byte is not the content type \(type.rawValue)")
        invariant(padded[1 ..< 1 + plaintext.count].elementsEqual(plaintext), "plaintext not copied after the marker")
        invariant(padded[(1 + plaintext.count) ..< (total - 4)].allSatisfy { $0 == 0 }, "fill is not zeros")
        let announced = padded[(total - 4)...].reduce(0) { $0 << 8 | Int($1) }
        invariant(announced == fill, "announced fill \(announced), actual \(fill)")
        do {
            let recovered = try MessagePadding.unpad(padded, contentType: type)
            invariant(recovered == plaintext, "unpad(pad(p)) != p")
        } catch {
            fail("unpad(pad(p)) threw \(error)")
        }
        let other: MessagePadding.ContentType = type == .application ? .senderKeyDistribution : .application
        do {
            _ = try MessagePadding.unpad(padded, contentType: other)
            fail("unpad accepted content type \(type.rawValue) as \(other.rawValue)")
        } catch {
            invariant(error == .invalidPadding, "unpad as the other type threw \(error), not invalidPadding")
        }
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for n in [0, 1, 58, 59, 60, 123, 1000] {
            let plaintext = fixedBytes(n, seed: UInt64(n))
            seeds.append([1] + plaintext)
            seeds.append([5] + plaintext)                                   // content type 0x02
            if let padded = try? MessagePadding.pad(plaintext) { seeds.append([0] + padded) }
            if let padded = try? MessagePadding.pad(plaintext, contentType: .senderKeyDistribution) { seeds.append([0] + padded) }
        }
        seeds.append([3, 0x01, 0x00, 0x00])          // 65536 bytes of plaintext
        seeds.append([3, 0x00, 0xff, 0xfb])          // exactly one 65536 bucket minus overhead
        seeds.append([0, 0x01, 0, 0, 0, 0])          // empty plaintext, no fill
        seeds.append([0, 0x01, 0, 0, 0, 1])          // fill longer than the buffer
        seeds.append([0, 0x02, 0, 0, 0, 0])          // content type 0x02, empty plaintext, no fill
        seeds.append([0, 0x03, 0, 0, 0, 0])          // reserved content type
        seeds.append([0, 0x00, 0, 0, 0, 0])          // reserved content type
        seeds.append([0, 0x01, 0xff, 0xff, 0xff, 0xff])
        return seeds
    }
}
