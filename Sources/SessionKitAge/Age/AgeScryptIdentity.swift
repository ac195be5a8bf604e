import SignalPrimitives

/// An age `scrypt` identity: a passphrase, with a limit on the work factor it accepts.
///
/// scrypt needs 128 · 8 · 2^workFactor bytes: 256 MiB at 18, 1 GiB at 20, 4 GiB at 22. A file
/// chooses its work factor, so the identity bounds it: by default at
/// `defaultMaximumWorkFactor` (20: what `AgeScryptRecipient` writes by default, 18, plus 2).
/// Pass a higher `maximumWorkFactor` (up to 30) to read files you know were written with more,
/// such as `age` tool files at its limit, 22.
///
/// Before scrypt runs, the memory it needs is compared with what the process can have (see
/// `AgeResourceLimit.scryptMemory`): half the physical memory, and where the system tells, the
/// memory still available (Linux `MemAvailable` and the cgroup limit; iOS, tvOS, watchOS and
/// visionOS `os_proc_available_memory()`). A file over either limit is refused with
/// `AgeError.resourceLimit` before any scrypt work, rather than letting the system end the app.
public struct AgeScryptIdentity: AgeIdentity, CustomStringConvertible {
    /// The default `maximumWorkFactor`: 20 (1 GiB of memory), the work factor
    /// `AgeScryptRecipient` writes by default (18) plus 2. The `age` tool accepts up to 22;
    /// pass that explicitly to read its files at their limit.
    public static let defaultMaximumWorkFactor = AgeScryptRecipient.defaultWorkFactor + 2

    let passphrase: SecureBytes
    /// The largest work factor (log2 N) this identity computes; a stanza above it is refused
    /// with `AgeError.resourceLimit(.scryptWorkFactor)`.
    public let maximumWorkFactor: Int
    /// The bytes scrypt may take (`ProcessMemory.availableByteCount()`, or a fixed figure in
    /// tests); `nil` for no check.
    let availableMemory: @Sendable () -> UInt64?

    /// An identity for `passphrase` (its UTF-8 bytes, unnormalised) that computes work factors
    /// up to `maximumWorkFactor`.
    /// - Throws: `AgeError.invalidIdentity` for an empty passphrase or a maximum work factor
    ///   outside 1 … 30.
    public init(passphrase: String, maximumWorkFactor: Int = defaultMaximumWorkFactor) throws(AgeError) {
        try self.init(passphrase: passphrase, maximumWorkFactor: maximumWorkFactor, availableMemory: { ProcessMemory.availableByteCount() })
    }

    /// `init(passphrase:maximumWorkFactor:)` with the memory figure given (tests).
    init(passphrase: String, maximumWorkFactor: Int, availableMemory: @escaping @Sendable () -> UInt64?) throws(AgeError) {
        guard !passphrase.isEmpty else { throw .invalidIdentity("the passphrase is empty") }
        guard AgeScryptRecipient.workFactorRange.contains(maximumWorkFactor) else {
            throw .invalidIdentity("the maximum work factor must be in \(AgeScryptRecipient.workFactorRange), not \(maximumWorkFactor)")
        }
        var bytes = Array(passphrase.utf8)
        defer { SecureMemory.zero(&bytes) }
        self.passphrase = SecureBytes(copying: bytes)
        self.maximumWorkFactor = maximumWorkFactor
        self.availableMemory = availableMemory
    }

    /// A redacted description: the limit only.
    public var description: String { "AgeScryptIdentity(maximumWorkFactor: \(maximumWorkFactor), passphrase redacted)" }

    /// Unwraps the header's `scrypt` stanza.
    /// - Throws: `AgeError.header` when an scrypt stanza is not the only stanza, or the stanza
    ///   has other than a salt and a work factor after its type, a salt that is not canonical
    ///   base64 of 16 bytes, a work factor that is not a decimal without leading zeros
    ///   (`^[1-9][0-9]*$`), or a body that is not 32 bytes; `AgeError.resourceLimit` with
    ///   `.scryptWorkFactor` for a work factor above `maximumWorkFactor`, `.scryptMemory` when
    ///   the process cannot have the memory scrypt needs (both before any scrypt work);
    ///   `AgeError.primitive` when scrypt's allocation fails all the same.
    public func unwrap(_ stanzas: [AgeStanza]) throws(AgeError) -> AgeFileKey? {
        try Self.checkAlone(stanzas)
        guard let stanza = stanzas.first(where: { $0.type == AgeScryptRecipient.stanzaType }) else { return nil }
        guard stanza.arguments.count == 3 else { throw .header("an scrypt stanza has a salt and a work factor after its type") }
        guard let salt = AgeBase64.decodeUnpadded(stanza.arguments[1]), salt.count == AgeScryptRecipient.saltByteCount else {
            throw .header("an scrypt salt must be canonical base64 of 16 bytes")
        }
        let digits = Array(stanza.arguments[2].utf8)
        guard let first = digits.first, (0x31 ... 0x39).contains(first), digits.allSatisfy({ (0x30 ... 0x39).contains($0) }) else {
            throw .header("an scrypt work factor must be a decimal number without leading zeros")
        }
        // More than two digits is above any limit (1 … 30): the value is reported clamped.
        let workFactor = digits.count <= 2 ? Int(stanza.arguments[2]) ?? Int.max : Int.max
        guard workFactor <= maximumWorkFactor else {
            throw .resourceLimit(.scryptWorkFactor(found: workFactor, maximum: maximumWorkFactor))
        }
        guard stanza.body.count == AgeKeyWrap.wrappedKeyByteCount else {
            throw .header("an scrypt stanza body must be 32 bytes (a wrapped 16-byte file key)")
        }
        if let required = Scrypt.memoryByteCount(logN: workFactor, r: 8), let available = availableMemory(), required > available {
            throw .resourceLimit(.scryptMemory(requiredByteCount: required, availableByteCount: available))
        }
        let wrapKey = try AgeScryptRecipient.wrapKey(passphrase: passphrase, salt: salt, workFactor: workFactor)
        return try AgeKeyWrap.unwrap(stanza.body, under: wrapKey)
    }

    /// `age.md`: an scrypt stanza, if present, must be the only stanza of the header.
    /// - Throws: `AgeError.header` when it is not.
    static func checkAlone(_ stanzas: [AgeStanza]) throws(AgeError) {
        if stanzas.count > 1, stanzas.contains(where: { $0.type == AgeScryptRecipient.stanzaType }) {
            throw .header("an scrypt stanza must be the only stanza in the header")
        }
    }
}
