/// Every protocol suite the runner knows, by the name in the file's `suite` field.
/// Add one line per suite, in SPEC §8 order.
public enum SuiteRegistry {
    /// The suites, keyed by name.
    public static var suites: [String: any ProtocolSuite.Type] {
        var all: [String: any ProtocolSuite.Type] = [:]
        for suite: any ProtocolSuite.Type in [
            // conversions (issue #2)
            Ed25519ToX25519Suite.self,
            Ed25519SeedToX25519Suite.self,
            X25519ToEd25519Suite.self,
            // padding, x3dh, ratchet, sender-key, self-encryption (issue #3)
            PaddingSuite.self,
            BundleSuite.self,
            X3DHSuite.self,
            RatchetSuite.self,
            SenderKeySuite.self,
            SelfEncryptionSuite.self,
            // safety-number, qr-payload (issue #4)
            SafetyNumberSuite.self,
            QRPayloadSuite.self,
            // retry-notice (issue #19, SPEC §9)
            RetryNoticeSuite.self,
            // attachment (issue #20, SPEC §10)
            AttachmentSuite.self,
        ] {
            all[suite.name] = suite
        }
        return all
    }
}
