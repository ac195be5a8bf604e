/// Every protocol suite the runner knows, by the name in the file's `suite` field.
/// Add one line per suite, in SPEC §8 order.
public enum SuiteRegistry {
    /// The suites, keyed by name.
    public static var suites: [String: any ProtocolSuite.Type] {
        var all: [String: any ProtocolSuite.Type] = [:]
        for suite: any ProtocolSuite.Type in [
            // conversions (issue #2)
            // padding, x3dh, ratchet, sender-key, self-encryption (issue #3)
            PaddingSuite.self,
            X3DHSuite.self,
            RatchetSuite.self,
            // safety-number, qr-payload (issue #4)
        ] {
            all[suite.name] = suite
        }
        return all
    }
}
