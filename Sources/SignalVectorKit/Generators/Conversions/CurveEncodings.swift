import SignalPrimitives

/// Byte-level encodings of edge-case field elements and points of Curve25519/edwards25519 for
/// the conversion generators. Little-endian, 32 bytes, bit 255 is the Ed25519 sign bit.
enum CurveEncodings {
    /// p = 2^255 − 19.
    static let p: [UInt8] = [0xed] + [UInt8](repeating: 0xff, count: 30) + [0x7f]

    /// The Ed25519 base point B (y = 4/5, sign bit 0); its X25519 form is u = 9.
    static let basePoint: [UInt8] = [0x58] + [UInt8](repeating: 0x66, count: 31)

    /// The eight points of small order in their canonical encodings, as listed in libsodium's
    /// `ed25519_is_small_order` blocklist (orders 1, 2, 4, 4, 8, 8, 8, 8).
    /// - Throws: `VectorGenerationError.selfCheckFailed` if a literal below is not 32 bytes of hex.
    static func smallOrderPoints() throws(VectorGenerationError) -> [(encoding: [UInt8], description: String)] {
        [
            (littleEndian(1), "identity (order 1), y = 1"),
            (minusOne, "order 2, y = p − 1"),
            (littleEndian(0), "order 4, y = 0, sign bit 0"),
            (littleEndian(0).withSignBit, "order 4, y = 0, sign bit 1"),
            (try hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"), "order 8, sign bit 0"),
            (try hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"), "order 8, sign bit 1"),
            (try hex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"), "order 8, sign bit 0"),
            (try hex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"), "order 8, sign bit 1"),
        ]
    }

    /// p − 1.
    static var minusOne: [UInt8] { littleEndian(0).subtracted(from: p, minus: 1) }

    /// `value` as 32 little-endian bytes.
    static func littleEndian(_ value: UInt64) -> [UInt8] {
        (0..<32).map { $0 < 8 ? UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) : 0 }
    }

    /// p + k for 0 ≤ k ≤ 18 (the non-canonical encodings below 2^255).
    static func pPlus(_ k: UInt8) -> [UInt8] {
        var out = p
        out[0] = 0xed + min(k, 18)
        return out
    }

    /// The 32 bytes of a hex literal written in the generators.
    /// - Throws: `VectorGenerationError.selfCheckFailed` unless `text` is valid hex of exactly
    ///   32 bytes (a mistyped literal fails the generation instead of trapping).
    static func hex(_ text: String) throws(VectorGenerationError) -> [UInt8] {
        guard let bytes = Hex.decode(text), bytes.count == 32 else {
            throw .selfCheckFailed(suite: "curve encodings", reason: "'\(text)' is not 32 bytes of hex")
        }
        return bytes
    }
}

extension Array where Element == UInt8 {
    /// The encoding with bit 255 set.
    var withSignBit: [UInt8] {
        var copy = self
        copy[31] |= 0x80
        return copy
    }

    /// The encoding with bit 255 cleared.
    var withoutSignBit: [UInt8] {
        var copy = self
        copy[31] &= 0x7f
        return copy
    }

    /// `minuend − self − extra` over 32 little-endian bytes (no underflow for the values used here).
    func subtracted(from minuend: [UInt8], minus extra: UInt8 = 0) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var borrow = Int(extra)
        for index in 0..<32 {
            var digit = Int(minuend[index]) - Int(self[index]) - borrow
            borrow = digit < 0 ? 1 : 0
            if digit < 0 { digit += 256 }
            out[index] = UInt8(digit)
        }
        return out
    }
}
