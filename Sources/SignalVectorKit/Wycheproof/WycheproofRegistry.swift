/// Every Wycheproof algorithm the runner checks (SPEC §8), by the file's `algorithm` value.
public enum WycheproofRegistry {
    /// The algorithms, keyed by name.
    public static var algorithms: [String: any WycheproofAlgorithm.Type] {
        var all: [String: any WycheproofAlgorithm.Type] = [:]
        for algorithm: any WycheproofAlgorithm.Type in [
            XDHAlgorithm.self,
            EdDSAAlgorithm.self,
            AESGCMAlgorithm.self,
            HKDFSHA256Algorithm.self,
            HMACSHA256Algorithm.self,
            XChaCha20Poly1305Algorithm.self,
            MLKEMAlgorithm.self,
        ] {
            all[algorithm.name] = algorithm
        }
        return all
    }
}
