import SignalPrimitives

/// An ML-KEM-768 encapsulation key `ek` (FIPS 203), as published in a KEM prekey (SPEC §1, §3).
///
/// Creating one runs FIPS 203's encapsulation-key input check (§7.2): exactly 1184 bytes, and
/// each of the 768 twelve-bit coefficients of its first 1152 bytes reduced mod q = 3329. The
/// check needs no KEM implementation, so a party without one can still tell a malformed key
/// (`invalidKey`) from a well-formed key it cannot use.
public struct KEMEncapsulationKey: Sendable, Hashable, CustomStringConvertible {
    /// Bytes of an ML-KEM-768 encapsulation key.
    public static let byteCount = 1184
    /// The type byte of `EncodeKEM(ek)` (SPEC §1).
    @_spi(Testing) public static let encodingTypeByte: UInt8 = 0x0B
    /// q of FIPS 203.
    static let modulus: UInt16 = 3329
    /// Bytes of the encoded polynomial vector t̂ (k = 3 polynomials of 256 twelve-bit coefficients).
    static let vectorByteCount = 1152

    /// The 1184 bytes.
    public let rawRepresentation: [UInt8]

    /// Wraps and checks an encapsulation key.
    /// - Throws: `SessionError.invalidKey` for a wrong length or a coefficient not reduced mod q.
    public init(rawRepresentation: [UInt8]) throws(SessionError) {
        guard Self.isWellFormed(rawRepresentation) else { throw .invalidKey }
        self.rawRepresentation = rawRepresentation
    }

    /// Wraps bytes already checked (or produced by a KEM's key generation).
    init(unchecked bytes: [UInt8]) { rawRepresentation = bytes }

    /// FIPS 203's input check: length 1184 and ByteEncode12(ByteDecode12(t̂)) = t̂, that is, no
    /// 12-bit coefficient is q or above.
    @_spi(Testing) public static func isWellFormed(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == byteCount else { return false }
        var reduced = true
        var offset = 0
        while offset < vectorByteCount {
            // Three bytes hold two coefficients, little-endian.
            let b0 = UInt16(bytes[offset]), b1 = UInt16(bytes[offset + 1]), b2 = UInt16(bytes[offset + 2])
            let first = b0 | (b1 & 0x0F) << 8
            let second = b1 >> 4 | b2 << 4
            reduced = reduced && first < modulus && second < modulus
            offset += 3
        }
        return reduced
    }

    /// `EncodeKEM(ek) = 0x0B || ek` (1185 bytes).
    @_spi(Testing) public var encoded: [UInt8] { [Self.encodingTypeByte] + rawRepresentation }

    /// The first bytes in hex (keys are long); never a secret.
    public var description: String { "KEMEncapsulationKey(\(Hex.encode(Array(rawRepresentation.prefix(8))))…)" }
}
