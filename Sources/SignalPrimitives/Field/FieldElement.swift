/// An element of GF(2^255 − 19) in radix 2^51 (five 64-bit limbs).
///
/// Used for the Ed25519 ↔ X25519 public-key maps. Products are formed with
/// `multipliedFullWidth(by:)`, so no 128-bit integer type (and no OS availability) is needed.
/// The arithmetic has no secret-dependent branches; it is only ever applied to public keys.
@usableFromInline
struct FieldElement: Sendable, Equatable {
    @usableFromInline var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64, l4: UInt64

    @usableFromInline static let mask51: UInt64 = (1 << 51) - 1

    @inlinable init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64, _ l4: UInt64) {
        (self.l0, self.l1, self.l2, self.l3, self.l4) = (l0, l1, l2, l3, l4)
    }

    static let zero = FieldElement(0, 0, 0, 0, 0)
    static let one = FieldElement(1, 0, 0, 0, 0)

    /// Decodes 32 little-endian bytes, ignoring bit 255. Values in [p, 2^255) are accepted
    /// and reduced by the arithmetic (the caller checks canonicity where the protocol wants it).
    /// Every caller passes exactly 32 bytes; bytes past the 32nd are ignored and missing ones
    /// read as zero, so no input can trap.
    init(bytes: UnsafeRawBufferPointer) {
        func word(_ i: Int) -> UInt64 {
            var w: UInt64 = 0
            for j in 0..<8 where i * 8 + j < bytes.count { w |= UInt64(bytes[i * 8 + j]) << (8 * UInt64(j)) }
            return w
        }
        let w0 = word(0), w1 = word(1), w2 = word(2), w3 = word(3) & 0x7fff_ffff_ffff_ffff
        let m = FieldElement.mask51
        self.init(w0 & m, (w0 >> 51 | w1 << 13) & m, (w1 >> 38 | w2 << 26) & m,
                  (w2 >> 25 | w3 << 39) & m, (w3 >> 12) & m)
    }

    /// Decodes 32 little-endian bytes (bit 255 ignored). The array must hold 32 bytes.
    init(bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { FieldElement(bytes: $0) }
    }

    /// Whether 32 bytes are a canonical encoding: bit 255 clear and the value below p.
    static func isCanonicalEncoding(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 32, bytes[31] & 0x80 == 0 else { return false }
        // value >= p  <=>  bytes = ed ff ff … ff 7f with the first byte >= 0xed
        guard bytes[31] == 0x7f else { return true }
        for i in 1...30 where bytes[i] != 0xff { return true }
        return bytes[0] < 0xed
    }

    /// Propagates carries so every limb is below 2^51 (plus a tiny excess in limb 0).
    @inline(__always)
    private func carried() -> FieldElement {
        let m = FieldElement.mask51
        var (a0, a1, a2, a3, a4) = (l0, l1, l2, l3, l4)
        a1 &+= a0 >> 51; a0 &= m
        a2 &+= a1 >> 51; a1 &= m
        a3 &+= a2 >> 51; a2 &= m
        a4 &+= a3 >> 51; a3 &= m
        a0 &+= 19 &* (a4 >> 51); a4 &= m
        a1 &+= a0 >> 51; a0 &= m
        return FieldElement(a0, a1, a2, a3, a4)
    }

    /// The canonical 32-byte little-endian encoding (value fully reduced mod p, bit 255 clear).
    var encoded: [UInt8] {
        var bytes = ByteArrays.zeroed32()
        bytes.withUnsafeMutableBytes { encode(into: $0) }
        return bytes
    }

    /// Writes the canonical 32-byte little-endian encoding into the first 32 bytes of `output`
    /// (which must hold at least 32 bytes).
    func encode(into output: UnsafeMutableRawBufferPointer) {
        let m = FieldElement.mask51
        var t = carried().carried()
        // Now t < 2^255 + small; subtract p once if t >= p (q = 1 exactly then).
        var q = (t.l0 &+ 19) >> 51
        q = (t.l1 &+ q) >> 51
        q = (t.l2 &+ q) >> 51
        q = (t.l3 &+ q) >> 51
        q = (t.l4 &+ q) >> 51
        t.l0 &+= 19 &* q
        t.l1 &+= t.l0 >> 51; t.l0 &= m
        t.l2 &+= t.l1 >> 51; t.l1 &= m
        t.l3 &+= t.l2 >> 51; t.l2 &= m
        t.l4 &+= t.l3 >> 51; t.l3 &= m
        t.l4 &= m
        let words = (t.l0 | t.l1 << 51, t.l1 >> 13 | t.l2 << 38, t.l2 >> 26 | t.l3 << 25, t.l3 >> 39 | t.l4 << 12)
        output.storeBytes(of: words.0.littleEndian, toByteOffset: 0, as: UInt64.self)
        output.storeBytes(of: words.1.littleEndian, toByteOffset: 8, as: UInt64.self)
        output.storeBytes(of: words.2.littleEndian, toByteOffset: 16, as: UInt64.self)
        output.storeBytes(of: words.3.littleEndian, toByteOffset: 24, as: UInt64.self)
    }

    static func + (f: FieldElement, g: FieldElement) -> FieldElement {
        FieldElement(f.l0 &+ g.l0, f.l1 &+ g.l1, f.l2 &+ g.l2, f.l3 &+ g.l3, f.l4 &+ g.l4).carried()
    }

    static func - (f: FieldElement, g: FieldElement) -> FieldElement {
        // f + 2p − g keeps every limb non-negative for carried inputs.
        let f = f.carried(), g = g.carried()
        return FieldElement((f.l0 &+ 0xf_ffff_ffff_ffda) &- g.l0, (f.l1 &+ 0xf_ffff_ffff_fffe) &- g.l1,
                            (f.l2 &+ 0xf_ffff_ffff_fffe) &- g.l2, (f.l3 &+ 0xf_ffff_ffff_fffe) &- g.l3,
                            (f.l4 &+ 0xf_ffff_ffff_fffe) &- g.l4).carried()
    }

    /// A 128-bit accumulator built from 64-bit halves.
    private struct Wide {
        var hi: UInt64 = 0
        var lo: UInt64 = 0

        @inline(__always) mutating func add(_ a: UInt64, _ b: UInt64) {
            let p = a.multipliedFullWidth(by: b)
            let (s, overflow) = lo.addingReportingOverflow(p.low)
            lo = s
            hi = hi &+ p.high &+ (overflow ? 1 : 0)
        }

        @inline(__always) mutating func add(_ c: UInt64) {
            let (s, overflow) = lo.addingReportingOverflow(c)
            lo = s
            hi = hi &+ (overflow ? 1 : 0)
        }

        /// The value shifted right by 51 bits (fits in 64 bits for our bounds).
        @inline(__always) var carry: UInt64 { hi << 13 | lo >> 51 }
    }

    @inline(__always) static func * (f: FieldElement, g: FieldElement) -> FieldElement {
        let m = mask51
        let (f0, f1, f2, f3, f4) = (f.l0, f.l1, f.l2, f.l3, f.l4)
        let (g0, g1, g2, g3, g4) = (g.l0, g.l1, g.l2, g.l3, g.l4)
        let g1_19 = 19 &* g1, g2_19 = 19 &* g2, g3_19 = 19 &* g3, g4_19 = 19 &* g4
        var r0 = Wide(), r1 = Wide(), r2 = Wide(), r3 = Wide(), r4 = Wide()
        r0.add(f0, g0); r0.add(f1, g4_19); r0.add(f2, g3_19); r0.add(f3, g2_19); r0.add(f4, g1_19)
        r1.add(f0, g1); r1.add(f1, g0); r1.add(f2, g4_19); r1.add(f3, g3_19); r1.add(f4, g2_19)
        r2.add(f0, g2); r2.add(f1, g1); r2.add(f2, g0); r2.add(f3, g4_19); r2.add(f4, g3_19)
        r3.add(f0, g3); r3.add(f1, g2); r3.add(f2, g1); r3.add(f3, g0); r3.add(f4, g4_19)
        r4.add(f0, g4); r4.add(f1, g3); r4.add(f2, g2); r4.add(f3, g1); r4.add(f4, g0)
        var c = r0.carry; let h0 = r0.lo & m
        r1.add(c); c = r1.carry; let h1 = r1.lo & m
        r2.add(c); c = r2.carry; let h2 = r2.lo & m
        r3.add(c); c = r3.carry; let h3 = r3.lo & m
        r4.add(c); c = r4.carry; let h4 = r4.lo & m
        var a0 = h0 &+ c &* 19
        let a1 = h1 &+ (a0 >> 51)
        a0 &= m
        return FieldElement(a0, a1, h2, h3, h4)
    }

    /// self², with the symmetric products computed once (15 limb products instead of 25).
    @inline(__always) func squared() -> FieldElement {
        let m = FieldElement.mask51
        let (f0, f1, f2, f3, f4) = (l0, l1, l2, l3, l4)
        let f0_2 = 2 &* f0, f1_2 = 2 &* f1
        let f1_38 = 38 &* f1, f2_38 = 38 &* f2, f3_38 = 38 &* f3
        let f3_19 = 19 &* f3, f4_19 = 19 &* f4
        var r0 = Wide(), r1 = Wide(), r2 = Wide(), r3 = Wide(), r4 = Wide()
        r0.add(f0, f0); r0.add(f1_38, f4); r0.add(f2_38, f3)
        r1.add(f0_2, f1); r1.add(f2_38, f4); r1.add(f3_19, f3)
        r2.add(f0_2, f2); r2.add(f1, f1); r2.add(f3_38, f4)
        r3.add(f0_2, f3); r3.add(f1_2, f2); r3.add(f4_19, f4)
        r4.add(f0_2, f4); r4.add(f1_2, f3); r4.add(f2, f2)
        var c = r0.carry; let h0 = r0.lo & m
        r1.add(c); c = r1.carry; let h1 = r1.lo & m
        r2.add(c); c = r2.carry; let h2 = r2.lo & m
        r3.add(c); c = r3.carry; let h3 = r3.lo & m
        r4.add(c); c = r4.carry; let h4 = r4.lo & m
        var a0 = h0 &+ c &* 19
        let a1 = h1 &+ (a0 >> 51)
        a0 &= m
        return FieldElement(a0, a1, h2, h3, h4)
    }

    func squared(times n: Int) -> FieldElement {
        var r = self
        for _ in 0..<n { r = r.squared() }
        return r
    }

    /// The multiplicative inverse by Fermat: self^(p−2). The inverse of zero is zero.
    func inverted() -> FieldElement {
        let z = self
        let z2 = z.squared()
        let z9 = z2.squared(times: 2) * z
        let z11 = z9 * z2
        let z2_5_0 = z11.squared() * z9
        let z2_10_0 = z2_5_0.squared(times: 5) * z2_5_0
        let z2_20_0 = z2_10_0.squared(times: 10) * z2_10_0
        let z2_40_0 = z2_20_0.squared(times: 20) * z2_20_0
        let z2_50_0 = z2_40_0.squared(times: 10) * z2_10_0
        let z2_100_0 = z2_50_0.squared(times: 50) * z2_50_0
        let z2_200_0 = z2_100_0.squared(times: 100) * z2_100_0
        let z2_250_0 = z2_200_0.squared(times: 50) * z2_50_0
        return z2_250_0.squared(times: 5) * z11
    }

    /// Equality of the reduced values.
    @usableFromInline static func == (a: FieldElement, b: FieldElement) -> Bool { a.encoded == b.encoded }

    /// The X25519 u-coordinate of the Edwards point with y-coordinate `y`: (1 + y)/(1 − y).
    /// (y = 1, the identity, gives 0.)
    static func montgomeryU(fromEdwardsY y: FieldElement) -> FieldElement {
        (FieldElement.one + y) * (FieldElement.one - y).inverted()
    }
}
