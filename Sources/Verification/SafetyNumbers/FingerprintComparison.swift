/// The outcome of comparing a scanned fingerprint with one's own (SPEC §7).
public enum FingerprintComparison: Equatable, Hashable, Sendable {
    /// Same version, and each side's local fingerprint equals the other's remote one: the
    /// parties hold each other's identity keys.
    case match
    /// Same version, but the fingerprints differ: a key or identifier is not what the other
    /// party has (a possible man in the middle, or a stale key).
    case mismatch
    /// The scanned fingerprint uses another version, so the fingerprints cannot be compared
    /// (one of the apps must be updated); this says nothing about the keys.
    case versionMismatch(ours: UInt32, theirs: UInt32)
}
