import SignalPrimitives

/// Wycheproof `XCHACHA20-POLY1305` (`AeadTest` groups): `key`, `iv`, `aad`, `msg`, `ct`, `tag`.
///
/// Every group runs, whatever its `ivSize` (SPEC §8): a test whose nonce is not 24 bytes is
/// run like any other, and since the library refuses such a nonce it must be an invalid test.
/// The checks are `AEADVectorCheck`'s.
public enum XChaCha20Poly1305Algorithm: WycheproofAlgorithm {
    /// `"XCHACHA20-POLY1305"`.
    public static let name = "XCHACHA20-POLY1305"
    /// `"AeadTest"`.
    public static let groupType = "AeadTest"

    /// Checks one test (`AEADVectorCheck`).
    /// - Throws: `VectorFailure` when a field is missing or not hex, when a valid test does not
    ///   open to `msg` or does not seal to `ct || tag`, when an invalid test (a modified tag or
    ///   ciphertext, a nonce of another length) opens, or when an acceptable test opens to
    ///   anything but `msg`.
    public static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome {
        try AEADVectorCheck.run(
            test, expecting: expectation,
            open: { (sealed, key, nonce, aad) throws(CryptoError) in
                try XChaCha20Poly1305.open(sealed, using: key, nonce: nonce, authenticating: aad)
            },
            seal: { (message, key, nonce, aad) throws(CryptoError) in
                try XChaCha20Poly1305.seal(message, using: key, nonce: nonce, authenticating: aad)
            })
    }
}
