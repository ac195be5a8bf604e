import SignalPrimitives

/// An age `X25519` identity: a Curve25519 private key, written `AGE-SECRET-KEY-1…` (Bech32,
/// uppercase), the form the `age` and `rage` tools read and write.
///
/// It unwraps `X25519` stanzas addressed to its public key (`recipient`). The key lives in
/// zeroing storage; `description` never shows it. `secretKeyString` is the one way out (to show
/// a recovery code or write a key file): a Swift `String` that cannot be wiped.
public struct AgeX25519Identity: AgeIdentity, CustomStringConvertible, CustomDebugStringConvertible {
    /// The Bech32 human-readable part of identities.
    static let humanReadablePart = "AGE-SECRET-KEY-"

    /// The private key.
    public let privateKey: X25519.PrivateKey

    /// A new random identity from `random` (the system CSPRNG by default).
    /// - Throws: `AgeError.primitive` when libsodium is unusable.
    public init(using random: any RandomSource = SystemRandomSource()) throws(AgeError) {
        do {
            privateKey = try X25519.PrivateKey(using: random)
        } catch {
            throw .primitive(error)
        }
    }

    /// The identity of `privateKey`.
    public init(privateKey: X25519.PrivateKey) {
        self.privateKey = privateKey
    }

    /// Parses an `AGE-SECRET-KEY-1…` string.
    /// - Throws: `AgeError.invalidIdentity` for anything but an uppercase Bech32 string with the
    ///   human-readable part `AGE-SECRET-KEY-` and 32 bytes of data.
    public init(_ string: String) throws(AgeError) {
        guard let (hrp, data) = Bech32.decode(string) else { throw .invalidIdentity("not a valid Bech32 string") }
        guard hrp == Self.humanReadablePart else { throw .invalidIdentity("not an AGE-SECRET-KEY-1… identity") }
        guard data.count == X25519.keyByteCount else {
            throw .invalidIdentity("an X25519 identity holds 32 bytes, not \(data.count)")
        }
        do {
            privateKey = try X25519.PrivateKey(bytes: data)
        } catch {
            throw .primitive(error)
        }
    }

    /// The recipient that encrypts to this identity.
    public var recipient: AgeX25519Recipient { AgeX25519Recipient(publicKey: privateKey.publicKey) }

    /// The `AGE-SECRET-KEY-1…` string. It is the secret key: show or store it only where the
    /// key itself may go.
    public var secretKeyString: String {
        var raw = privateKey.rawRepresentation
        defer { SecureMemory.zero(&raw) }
        return Bech32.encode(hrp: Self.humanReadablePart, data: raw)
    }

    /// A redacted description: the recipient only.
    public var description: String { "AgeX25519Identity(recipient: \(recipient), secret redacted)" }
    /// A redacted description: the recipient only.
    public var debugDescription: String { description }

    /// Unwraps the first `X25519` stanza addressed to this identity.
    /// - Throws: `AgeError.header` for an `X25519` stanza with other than one argument after
    ///   the type, a share that is not canonical base64 of 32 bytes, a body that is not 32
    ///   bytes, or a share that gives an all-zero secret.
    public func unwrap(_ stanzas: [AgeStanza]) throws(AgeError) -> AgeFileKey? {
        for stanza in stanzas where stanza.type == AgeX25519Recipient.stanzaType {
            guard stanza.arguments.count == 2 else { throw .header("an X25519 stanza has exactly one argument after its type") }
            guard let share = AgeBase64.decodeUnpadded(stanza.arguments[1]), share.count == X25519.keyByteCount else {
                throw .header("an X25519 share must be canonical base64 of 32 bytes")
            }
            guard stanza.body.count == AgeKeyWrap.wrappedKeyByteCount else {
                throw .header("an X25519 stanza body must be 32 bytes (a wrapped 16-byte file key)")
            }
            let shared: SymmetricKey
            do {
                shared = try privateKey.sharedSecret(with: X25519.PublicKey(rawRepresentation: share))
            } catch .invalidKey {
                throw .header("an X25519 share gives an all-zero shared secret")
            } catch {
                throw .primitive(error)
            }
            let wrapKey = try AgeX25519Recipient.wrapKey(shared: shared, share: share, recipient: privateKey.publicKey.rawRepresentation)
            if let fileKey = try AgeKeyWrap.unwrap(stanza.body, under: wrapKey) { return fileKey }
        }
        return nil
    }
}
