import SignalPrimitives

/// Fresh `ed25519-seed-to-x25519` tests: the seeds of 32 zero bytes, 32 0xff bytes and
/// 00 01 … 1f, the RFC 8032 TEST 1 secret key, and random seeds.
public enum Ed25519SeedToX25519Generator: ProtocolSuiteGenerator {
    /// `Ed25519SeedToX25519Suite`.
    public static var suite: any ProtocolSuite.Type { Ed25519SeedToX25519Suite.self }
    /// What the tests cover.
    public static let summary = "SPEC §1 ed→x private (clamped SHA-512(seed)[0..<32]) and its public key"

    /// Number of random seeds.
    static let randomSeedCount = 32

    /// The tests.
    /// - Throws: `VectorGenerationError.selfCheckFailed` when the converted key is not clamped
    ///   or its public key differs from the ed→x conversion of the seed's public key.
    public static func tests(using random: DeterministicRandomSource) throws -> [GeneratedTest] {
        var seeds: [([UInt8], String)] = [
            ([UInt8](repeating: 0, count: 32), "seed of 32 zero bytes"),
            ([UInt8](repeating: 0xff, count: 32), "seed of 32 0xff bytes"),
            ((0..<32).map { UInt8($0) }, "seed 00 01 02 … 1f"),
            (try CurveEncodings.hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"),
             "RFC 8032 7.1 TEST 1 secret key"),
        ]
        for index in 0..<randomSeedCount { seeds.append((random.bytes(32), "random seed #\(index)")) }

        return try seeds.map { seed, comment in
            let edKey: Ed25519.PrivateKey
            do { edKey = try Ed25519.PrivateKey(seed: seed) } catch {
                throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(comment): \(error)")
            }
            let xKey = edKey.convertToX25519()
            let secret = xKey.rawRepresentation
            guard secret[0] & 7 == 0, secret[31] & 0xc0 == 0x40,
                  (try? edKey.publicKey.convertToX25519()) == xKey.publicKey else {
                throw VectorGenerationError.selfCheckFailed(suite: suite.name, reason: "\(comment): inconsistent conversion")
            }
            return [
                JSONMember("comment", .string(comment)),
                JSONMember("ed25519_seed", .hex(seed)),
                JSONMember("x25519_sk", .hex(secret)),
                JSONMember("x25519_pk", .hex(xKey.publicKey.rawRepresentation)),
            ]
        }
    }
}
