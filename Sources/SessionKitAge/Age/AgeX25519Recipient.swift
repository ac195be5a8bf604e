import SignalPrimitives

/// An age `X25519` recipient: a Curve25519 public key, written `age1…` (Bech32, lowercase).
///
/// Encrypting to it draws a fresh ephemeral key per file and wraps the file key as `age.md`
/// specifies; only the matching `AgeX25519Identity` unwraps it. The string form is public:
/// share it so that others can encrypt to you.
public struct AgeX25519Recipient: AgeRecipient, Hashable, CustomStringConvertible {
    /// The Bech32 human-readable part of recipients.
    static let humanReadablePart = "age"
    /// The stanza type.
    static let stanzaType = "X25519"
    /// The HKDF info of the wrap key.
    static let wrapInfo = "age-encryption.org/v1/X25519"

    /// The public key.
    public let publicKey: X25519.PublicKey

    /// The recipient of `publicKey`.
    public init(publicKey: X25519.PublicKey) {
        self.publicKey = publicKey
    }

    /// Parses an `age1…` recipient string.
    /// - Throws: `AgeError.invalidRecipient` for anything but a lowercase Bech32 string with the
    ///   human-readable part `age` and 32 bytes of data.
    public init(_ string: String) throws(AgeError) {
        guard let (hrp, data) = Bech32.decode(string) else { throw .invalidRecipient("not a valid Bech32 string") }
        guard hrp == Self.humanReadablePart else { throw .invalidRecipient("not an age1… X25519 recipient") }
        guard let key = try? X25519.PublicKey(rawRepresentation: data.bytes) else {
            throw .invalidRecipient("an X25519 recipient holds 32 bytes, not \(data.count)")
        }
        publicKey = key
    }

    /// The `age1…` string.
    public var string: String { Bech32.encode(hrp: Self.humanReadablePart, data: publicKey.rawRepresentation) }

    /// The `age1…` string.
    public var description: String { string }

    /// One `X25519` stanza wrapping `fileKey` under a new ephemeral key.
    /// - Throws: `AgeError.invalidRecipient` when the public key is of small order (the shared
    ///   secret would be all zeros); `AgeError.primitive` when libsodium is unusable.
    public func wrap(_ fileKey: AgeFileKey) throws(AgeError) -> [AgeStanza] {
        let ephemeral: X25519.PrivateKey
        let shared: SymmetricKey
        do {
            ephemeral = try X25519.PrivateKey()
            shared = try ephemeral.sharedSecret(with: publicKey)
        } catch .invalidKey {
            throw .invalidRecipient("the recipient's public key gives an all-zero shared secret")
        } catch {
            throw .primitive(error)
        }
        let share = ephemeral.publicKey.rawRepresentation
        let wrapKey = try Self.wrapKey(shared: shared, share: share, recipient: publicKey.rawRepresentation)
        let body = try AgeKeyWrap.wrap(fileKey, under: wrapKey)
        return [AgeStanza(checkedArguments: [Self.stanzaType, AgeBase64.encodeUnpadded(share)], body: body)]
    }

    /// HKDF-SHA-256(ikm = shared secret, salt = share || recipient, info = "age-encryption.org/v1/X25519").
    static func wrapKey(shared: SymmetricKey, share: [UInt8], recipient: [UInt8]) throws(AgeError) -> SymmetricKey {
        do {
            return try HKDF.deriveKey(inputKeyMaterial: shared, salt: share + recipient, info: Array(wrapInfo.utf8), outputByteCount: 32)
        } catch {
            throw .primitive(error)
        }
    }
}
