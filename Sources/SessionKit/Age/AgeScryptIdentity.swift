import SignalPrimitives

/// An age `scrypt` identity: a passphrase, with a limit on the work factor it accepts.
///
/// scrypt needs 128 · 8 · 2^workFactor bytes: 256 MiB at 18, 4 GiB at 22. The limit stops a
/// file from making the app allocate more than it chose; the default, 22, is the `age` tool's.
/// Lower it on devices with little memory.
public struct AgeScryptIdentity: AgeIdentity, CustomStringConvertible {
    /// The default `maximumWorkFactor`: 22, as the `age` tool.
    public static let defaultMaximumWorkFactor = 22

    let passphrase: SecureBytes
    /// The largest work factor (log2 N) this identity computes; a stanza above it is a header
    /// failure.
    public let maximumWorkFactor: Int

    /// An identity for `passphrase` (its UTF-8 bytes, unnormalised).
    /// - Throws: `AgeError.invalidIdentity` for an empty passphrase or a maximum work factor
    ///   outside 1 … 30.
    public init(passphrase: String, maximumWorkFactor: Int = defaultMaximumWorkFactor) throws(AgeError) {
        guard !passphrase.isEmpty else { throw .invalidIdentity("the passphrase is empty") }
        guard AgeScryptRecipient.workFactorRange.contains(maximumWorkFactor) else {
            throw .invalidIdentity("the maximum work factor must be in \(AgeScryptRecipient.workFactorRange), not \(maximumWorkFactor)")
        }
        var bytes = Array(passphrase.utf8)
        defer { SecureMemory.zero(&bytes) }
        self.passphrase = SecureBytes(copying: bytes)
        self.maximumWorkFactor = maximumWorkFactor
    }

    /// A redacted description: the limit only.
    public var description: String { "AgeScryptIdentity(maximumWorkFactor: \(maximumWorkFactor), passphrase redacted)" }

    /// Unwraps the header's `scrypt` stanza.
    /// - Throws: `AgeError.header` when an scrypt stanza is not the only stanza, or the stanza
    ///   has other than a salt and a work factor after its type, a salt that is not canonical
    ///   base64 of 16 bytes, a work factor that is not a decimal without leading zeros
    ///   (`^[1-9][0-9]*$`) or is above `maximumWorkFactor`, or a body that is not 32 bytes;
    ///   `AgeError.primitive` when scrypt's memory is unavailable.
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
        guard digits.count <= 2, let workFactor = Int(stanza.arguments[2]), workFactor <= maximumWorkFactor else {
            throw .header("the scrypt work factor \(stanza.arguments[2].prefix(20)) is above the limit \(maximumWorkFactor)")
        }
        guard stanza.body.count == AgeKeyWrap.wrappedKeyByteCount else {
            throw .header("an scrypt stanza body must be 32 bytes (a wrapped 16-byte file key)")
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
