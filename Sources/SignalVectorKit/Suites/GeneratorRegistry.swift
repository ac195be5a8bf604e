/// Every suite generator of `signal-vectors generate`, in SPEC §8 order.
/// Add one line per suite that can produce fresh vectors.
public enum GeneratorRegistry {
    /// The generators, in the order their files are written.
    public static var generators: [any ProtocolSuiteGenerator.Type] {
        [
            // conversions (issue #2)
            Ed25519ToX25519Generator.self,
            Ed25519SeedToX25519Generator.self,
            X25519ToEd25519Generator.self,
        ]
    }
}
