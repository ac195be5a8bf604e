import SignalPrimitives

/// An age `scrypt` recipient: a passphrase. The file key is wrapped under
/// scrypt(N = 2^workFactor, r = 8, p = 1) of the passphrase and a fresh 16-byte salt.
///
/// `age.md` requires an scrypt stanza to be the only stanza of its header (a passphrase-
/// encrypted file promises that only the passphrase opens it): `AgeEncryptor` refuses an
/// scrypt recipient next to any other recipient.
public struct AgeScryptRecipient: AgeRecipient, CustomStringConvertible {
    /// The stanza type.
    static let stanzaType = "scrypt"
    /// The prefix of the scrypt salt.
    static let saltLabel = Array("age-encryption.org/v1/scrypt".utf8)
    /// The length of the random salt.
    static let saltByteCount = 16
    /// The default work factor (log2 N): 18, as the `age` tool and SPEC §10 use (256 MiB of
    /// memory, about a second on a phone).
    public static let defaultWorkFactor = 18
    /// The work factors this type writes: 1 … 30.
    public static let workFactorRange = 1 ... 30

    let passphrase: SecureBytes
    /// The base-2 logarithm of scrypt's N.
    public let workFactor: Int

    /// A recipient for `passphrase` (its UTF-8 bytes, unnormalised) at `workFactor`.
    /// - Throws: `AgeError.invalidRecipient` for an empty passphrase or a work factor outside
    ///   `workFactorRange`.
    public init(passphrase: String, workFactor: Int = defaultWorkFactor) throws(AgeError) {
        guard !passphrase.isEmpty else { throw .invalidRecipient("the passphrase is empty") }
        guard Self.workFactorRange.contains(workFactor) else {
            throw .invalidRecipient("the scrypt work factor must be in \(Self.workFactorRange), not \(workFactor)")
        }
        var bytes = Array(passphrase.utf8)
        defer { SecureMemory.zero(&bytes) }
        self.passphrase = SecureBytes(copying: bytes)
        self.workFactor = workFactor
    }

    /// A redacted description: the work factor only.
    public var description: String { "AgeScryptRecipient(workFactor: \(workFactor), passphrase redacted)" }

    /// One `scrypt` stanza wrapping `fileKey`.
    /// - Throws: `AgeError.primitive` when scrypt cannot run (its memory unavailable).
    public func wrap(_ fileKey: AgeFileKey) throws(AgeError) -> [AgeStanza] {
        let salt = SecureRandom.bytes(Self.saltByteCount)
        let wrapKey = try Self.wrapKey(passphrase: passphrase, salt: salt, workFactor: workFactor)
        let body = try AgeKeyWrap.wrap(fileKey, under: wrapKey)
        return [AgeStanza(checkedArguments: [Self.stanzaType, AgeBase64.encodeUnpadded(salt), String(workFactor)], body: body)]
    }

    /// scrypt(N = 2^workFactor, r = 8, p = 1, dkLen = 32, S = label || salt, P = passphrase).
    static func wrapKey(passphrase: SecureBytes, salt: [UInt8], workFactor: Int) throws(AgeError) -> SymmetricKey {
        do {
            return try Scrypt.deriveKey(password: passphrase, salt: saltLabel + salt, logN: workFactor, r: 8, p: 1, outputByteCount: 32)
        } catch {
            throw .primitive(error)
        }
    }
}
