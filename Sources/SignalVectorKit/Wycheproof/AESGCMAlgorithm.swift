import SignalPrimitives

/// Wycheproof `AES-GCM` (`AeadTest` groups): `key`, `iv`, `aad`, `msg`, `ct`, `tag`.
///
/// Only groups with `keySize` 256, `ivSize` 96 and `tagSize` 128 run: the library offers
/// AES-256-GCM with a 12-byte nonce and a 16-byte tag only. Other groups, and every group on a
/// CPU without AES-NI and PCLMUL, count as skipped (never as passed). A valid test must seal
/// `msg` to exactly `ct || tag` and open `ct || tag` to `msg`; an invalid test must fail to
/// open; an acceptable test may fail to open but must not open to anything but `msg`.
public enum AESGCMAlgorithm: WycheproofAlgorithm {
    /// `"AES-GCM"`.
    public static let name = "AES-GCM"
    /// `"AeadTest"`.
    public static let groupType = "AeadTest"

    /// Runs the `AeadTest` groups with 256/96/128; skips the others.
    /// - Throws: `VectorFailure` when `type`, `keySize`, `ivSize` or `tagSize` is missing.
    public static func disposition(of group: VectorTest) throws -> WycheproofGroupDisposition {
        let typeDisposition = try groupTypeDisposition(of: group)
        guard typeDisposition == .run else { return typeDisposition }
        let keySize = try group.int("keySize")
        let ivSize = try group.int("ivSize")
        let tagSize = try group.int("tagSize")
        guard keySize == 8 * AES256GCM.keyByteCount else {
            return .skip("AES-GCM keySize \(keySize) is not offered (only 256)")
        }
        guard ivSize == 8 * AES256GCM.nonceByteCount else {
            return .skip("AES-GCM ivSize \(ivSize) is not offered (only 96)")
        }
        guard tagSize == 8 * AES256GCM.tagByteCount else {
            return .skip("AES-GCM tagSize \(tagSize) is not offered (only 128)")
        }
        guard AES256GCM.isAvailable else {
            return .skip("AES-256-GCM is unavailable on this CPU (libsodium needs AES-NI and PCLMUL)")
        }
        return .run
    }

    /// Checks one test (`AEADVectorCheck`).
    /// - Throws: `VectorFailure` when `key`, `iv`, `aad`, `msg`, `ct` or `tag` is missing or
    ///   not hex, when a valid test does not open to `msg` or does not seal to `ct || tag`, when
    ///   an invalid test opens, or when an acceptable test opens to anything but `msg`.
    public static func run(_ test: VectorTest, expecting expectation: WycheproofExpectation, in group: VectorTest) throws -> VectorOutcome {
        try AEADVectorCheck.run(
            test, expecting: expectation,
            open: { (sealed, key, nonce, aad) throws(CryptoError) in try AES256GCM.open(sealed, using: key, nonce: nonce, authenticating: aad) },
            seal: { (message, key, nonce, aad) throws(CryptoError) in try AES256GCM.seal(message, using: key, nonce: nonce, authenticating: aad) })
    }
}
