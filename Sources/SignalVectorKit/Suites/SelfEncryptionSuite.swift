@_spi(Testing) import SessionKit
import SignalPrimitives

/// SPEC §8 suite `self-encryption`: `identity_seed`, `context`, `nonce`, `plaintext` → `sealed`
/// (sealing must give exactly `sealed`, and opening it must give back `plaintext`); error
/// tests give `identity_seed`, `context`, `sealed` and the `error` opening must throw.
public enum SelfEncryptionSuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "self-encryption"

    /// Runs one test.
    /// - Throws: `VectorFailure` on a mismatch or a malformed test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let seed = try test.hex("identity_seed")
        let context = try test.hex("context")
        let identity: Ed25519.PrivateKey
        do { identity = try Ed25519.PrivateKey(seed: seed) } catch {
            throw VectorFailure("identity_seed is not a 32-byte seed: \(error)")
        }

        if let expected = test.expectedError {
            let sealed = try test.hex("sealed")
            try ExpectedError.check(expected) {
                _ = try SelfEncryption(identityKey: identity).open(sealed, context: context)
            }
            return .passed
        }

        let nonce = try test.hex("nonce")
        guard nonce.count == XChaCha20Poly1305.nonceByteCount else {
            throw VectorFailure("nonce must be \(XChaCha20Poly1305.nonceByteCount) bytes, got \(nonce.count)")
        }
        let plaintext = try test.hex("plaintext")
        let expected = try test.hex("sealed")
        let cipher = SelfEncryption(identityKey: identity, using: FixedNonceSource(nonce: nonce))
        try ExpectedError.equal(try cipher.seal(plaintext, context: context), expected, "sealed")
        try ExpectedError.equal(try cipher.open(expected, context: context), plaintext, "opened plaintext")
        return .passed
    }
}

/// A random source that hands out one fixed nonce (the suite's `nonce`), so sealing is
/// reproducible. Every fill gets the nonce's leading bytes (zeros past its end).
private struct FixedNonceSource: RandomSource {
    let nonce: [UInt8]

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in buffer.indices { buffer[index] = index < nonce.count ? nonce[index] : 0 }
    }
}
