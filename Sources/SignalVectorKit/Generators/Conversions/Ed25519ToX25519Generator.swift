import SignalPrimitives

/// Fresh `ed25519-to-x25519` tests: public keys of random seeds, the base point and its
/// negation, and invalid points (the eight small-order points, every non-canonical encoding
/// y = p + k with both sign bits, points of mixed order 2ℓ, random bytes that are not valid).
public enum Ed25519ToX25519Generator: ProtocolSuiteGenerator {
    /// `Ed25519ToX25519Suite`.
    public static var suite: any ProtocolSuite.Type { Ed25519ToX25519Suite.self }
    /// What the tests cover.
    public static let summary = "SPEC §1 ed→x public (valid-point check first)"

    /// Number of random valid keys.
    static let randomKeyCount = 32

    /// The tests.
    /// - Throws: `VectorGenerationError.selfCheckFailed` when the conversion of a seed's public
    ///   key disagrees with the public key of the seed's converted private key, or an
    ///   invalid candidate turns out to be a valid point.
    public static func tests(using random: DeterministicRandomSource) throws -> [GeneratedTest] {
        var tests: [GeneratedTest] = []
        var seen = Set<[UInt8]>()

        func valid(_ key: Ed25519.PublicKey, _ comment: String) throws {
            guard seen.insert(key.rawRepresentation).inserted else { return }
            let converted: X25519.PublicKey
            do {
                converted = try key.convertToX25519()
            } catch {
                throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(comment): \(error)")
            }
            tests.append([
                JSONMember("comment", .string(comment)),
                JSONMember("ed25519_pk", .hex(key.rawRepresentation)),
                JSONMember("x25519_pk", .hex(converted.rawRepresentation)),
            ])
        }

        func invalid(_ bytes: [UInt8], _ comment: String) throws {
            guard seen.insert(bytes).inserted else { return }
            let key = try? Ed25519.PublicKey(rawRepresentation: bytes)
            guard let key, !key.isValidPoint else {
                throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(comment): is a valid point")
            }
            tests.append([
                JSONMember("comment", .string(comment)),
                JSONMember("ed25519_pk", .hex(bytes)),
                JSONMember("error", .string("invalidKey")),
            ])
        }

        // Valid: the base point (u = 9), its negation (sign bit set, same u), random keys.
        let base = try publicKey(CurveEncodings.basePoint)
        try valid(base, "base point B (y = 4/5), u = 9")
        try valid(try publicKey(CurveEncodings.basePoint.withSignBit), "−B (the base point with the sign bit set), u = 9")
        var randomKeys: [Ed25519.PublicKey] = []
        for index in 0..<randomKeyCount {
            let seedKey = try privateKey(using: random)
            // Cross-check: SPEC §1 defines the same u through the private key (libsodium's
            // X25519 base-point multiplication) and through the public key (Swift field arithmetic).
            let viaPrivate = seedKey.convertToX25519().publicKey
            let viaPublic = try? seedKey.publicKey.convertToX25519()
            guard viaPublic == viaPrivate else {
                throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "random key #\(index): the two routes disagree")
            }
            randomKeys.append(seedKey.publicKey)
            try valid(seedKey.publicKey, "public key of random Ed25519 seed #\(index)")
        }

        // Invalid: small order, in canonical encodings.
        for point in try CurveEncodings.smallOrderPoints() {
            try invalid(point.encoding, "small-order point: \(point.description)")
        }
        // Invalid: non-canonical y = p + k (k = 0 … 18), both sign bits.
        for k in UInt8(0)...18 {
            let what = k == 0 ? "p" : (k == 18 ? "2^255 − 1" : "p + \(k)")
            try invalid(CurveEncodings.pPlus(k), "non-canonical encoding y = \(what), sign bit 0")
            try invalid(CurveEncodings.pPlus(k).withSignBit, "non-canonical encoding y = \(what), sign bit 1")
        }
        // Invalid: mixed order 2ℓ. A + T₂ with T₂ = (0, −1) of order 2 is (−x, −y): y' = p − y
        // and the sign bit flipped (x ≠ 0 for a point of prime order).
        for (index, key) in randomKeys.prefix(8).enumerated() {
            let y = key.rawRepresentation.withoutSignBit
            var mixed = y.subtracted(from: CurveEncodings.p)
            mixed[31] |= (key.rawRepresentation[31] & 0x80) ^ 0x80
            try invalid(mixed, "mixed order: public key of random seed #\(index) plus the point of order 2")
        }
        // Invalid: random 32-byte strings that are not valid points (off the curve, or on it
        // with a torsion component).
        var found = 0
        while found < 16 {
            var bytes = random.bytes(32)
            if found % 2 == 0 { bytes[31] &= 0x7f } else { bytes[31] |= 0x80 }
            guard let key = try? Ed25519.PublicKey(rawRepresentation: bytes), !key.isValidPoint,
                  FieldElementEncoding.isCanonical(bytes.withoutSignBit) else { continue }
            try invalid(bytes, "random 32 bytes that are not a valid point (off the curve or of mixed order), sign bit \(bytes[31] >> 7)")
            found += 1
        }
        return tests
    }

    private static func publicKey(_ bytes: [UInt8]) throws -> Ed25519.PublicKey {
        do { return try Ed25519.PublicKey(rawRepresentation: bytes) } catch {
            throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(error)")
        }
    }

    private static func privateKey(using random: DeterministicRandomSource) throws -> Ed25519.PrivateKey {
        do { return try Ed25519.PrivateKey(seed: random.bytes(32)) } catch {
            throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(error)")
        }
    }
}

/// Canonicity of a 32-byte little-endian field element (bit 255 clear and below p).
enum FieldElementEncoding {
    static func isCanonical(_ bytes: [UInt8]) -> Bool {
        (try? X25519.PublicKey(canonicalRepresentation: bytes)) != nil
    }
}
