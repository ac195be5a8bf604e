/// A reader limit that an age file exceeded (`AgeError.resourceLimit`): the file asks for more
/// work or memory than the reader agreed to spend, and it was refused before that work started.
///
/// Unlike `AgeError.header`, the file may be well formed: a file the app trusts can be read with
/// a higher limit where the limit is the caller's (`AgeScryptIdentity.maximumWorkFactor`); the
/// stanza count and the memory the device can give are not.
public enum AgeResourceLimit: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The header has more recipient stanzas than `AgeDecryptor.maximumStanzaCount`; the reader
    /// stopped at the first stanza over the limit.
    case stanzaCount(maximum: Int)
    /// The `scrypt` stanza asks for a work factor (log2 N) above the identity's
    /// `maximumWorkFactor` (`found` is `Int.max` for a number of more than two digits, above
    /// any limit); scrypt did not run.
    case scryptWorkFactor(found: Int, maximum: Int)
    /// scrypt at the stanza's work factor needs `requiredByteCount` bytes (128 · 8 · 2^workFactor),
    /// more than this process can have (`availableByteCount`, see `AgeScryptIdentity`); scrypt
    /// did not run.
    case scryptMemory(requiredByteCount: UInt64, availableByteCount: UInt64)

    /// A short description (numbers only).
    public var description: String {
        switch self {
        case let .stanzaCount(maximum):
            return "the header has more than \(maximum) recipient stanzas"
        case let .scryptWorkFactor(found, maximum):
            return "the scrypt work factor \(found) is above the limit \(maximum)"
        case let .scryptMemory(required, available):
            return "scrypt would need \(required) bytes of memory, more than the \(available) bytes this process can have"
        }
    }
}
