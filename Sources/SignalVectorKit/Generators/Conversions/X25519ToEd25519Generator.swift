import SignalPrimitives

/// Fresh `x25519-to-ed25519` tests: u = 0, 1, 9, p − 2, p − 1, every u = p + k below 2^255,
/// inputs with bit 255 set, public keys of random X25519 keys, X25519 forms of random Ed25519
/// keys (which map back to the Ed25519 key with sign bit 0) and arbitrary 32-byte strings.
public enum X25519ToEd25519Generator: ProtocolSuiteGenerator {
    /// `X25519ToEd25519Suite`.
    public static var suite: any ProtocolSuite.Type { X25519ToEd25519Suite.self }
    /// What the tests cover.
    public static let summary = "SPEC §1 x→ed public (XEdDSA convert_mont, total on 32 bytes)"

    /// Number of tests of each random kind.
    static let randomCount = 16

    /// The tests.
    /// - Throws: `VectorGenerationError.selfCheckFailed` when u = 9 does not give the base
    ///   point, bit 255 changes the result, or x→ed(ed→x(A)) is not A with sign bit 0.
    public static func tests(using random: DeterministicRandomSource) throws -> [GeneratedTest] {
        var tests: [GeneratedTest] = []

        func add(_ bytes: [UInt8], _ comment: String, expect expected: [UInt8]? = nil) throws {
            let converted: Ed25519.PublicKey
            do { converted = try X25519.PublicKey(rawRepresentation: bytes).convertToEd25519() } catch {
                throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(comment): \(error)")
            }
            let output = converted.rawRepresentation
            guard output[31] & 0x80 == 0, expected == nil || expected == output else {
                throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(comment): unexpected \(Hex.encode(output))")
            }
            tests.append([
                JSONMember("comment", .string(comment)),
                JSONMember("x25519_pk", .hex(bytes)),
                JSONMember("ed25519_pk", .hex(output)),
            ])
        }
        func converted(_ bytes: [UInt8]) -> [UInt8]? {
            (try? X25519.PublicKey(rawRepresentation: bytes))?.convertToEd25519().rawRepresentation
        }

        let le = CurveEncodings.littleEndian
        try add(le(0), "u = 0 (y = −1)")
        try add(le(1), "u = 1 (y = 0)")
        try add(le(9), "u = 9, the base point: y = 4/5, the Ed25519 base point", expect: CurveEncodings.basePoint)
        try add(le(1).subtracted(from: CurveEncodings.p, minus: 1), "u = p − 2")
        try add(CurveEncodings.minusOne, "u = p − 1 (u + 1 = 0, whose p − 2 power is 0, so y = 0)", expect: le(0))
        for k in UInt8(0)...18 {
            let what = k == 0 ? "p" : (k == 18 ? "2^255 − 1" : "p + \(k)")
            try add(CurveEncodings.pPlus(k), "u = \(what), bit 255 clear (reduced mod p to \(k))",
                    expect: converted(le(UInt64(k))))
        }
        try add(le(0).withSignBit, "only bit 255 set: u = 0 once it is cleared", expect: converted(le(0)))
        try add(le(9).withSignBit, "u = 9 with bit 255 set: same as u = 9", expect: CurveEncodings.basePoint)

        for index in 0..<randomCount {
            let key = try x25519Key(using: random)
            try add(key.publicKey.rawRepresentation, "public key of random X25519 private key #\(index)")
        }
        for index in 0..<randomCount / 2 {
            let key = try x25519Key(using: random).publicKey.rawRepresentation
            try add(key.withSignBit, "bit 255 set on the public key of random X25519 private key #\(index)",
                    expect: converted(key))
        }
        for index in 0..<randomCount {
            let edKey: Ed25519.PrivateKey
            let xKey: X25519.PublicKey
            do {
                edKey = try Ed25519.PrivateKey(seed: random.bytes(32))
                xKey = try edKey.publicKey.convertToX25519()
            } catch {
                throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(error)")
            }
            try add(xKey.rawRepresentation, "X25519 form of random Ed25519 key #\(index): gives that key with sign bit 0",
                    expect: edKey.publicKey.rawRepresentation.withoutSignBit)
        }
        for index in 0..<randomCount {
            try add(random.bytes(32), "arbitrary 32 bytes #\(index) (on the curve or not)")
        }
        return tests
    }

    private static func x25519Key(using random: DeterministicRandomSource) throws -> X25519.PrivateKey {
        do { return try X25519.PrivateKey(using: random) } catch {
            throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(error)")
        }
    }
}
