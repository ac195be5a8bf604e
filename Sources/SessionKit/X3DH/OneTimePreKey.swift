import SignalPrimitives

/// A one-time prekey (SPEC §3): an X25519 key pair with a u32 id, used by at most one X3DH.
@_spi(Testing) public struct OneTimePreKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The id published in bundles and named by prekey messages.
    public let id: UInt32
    /// The X25519 private key.
    public let privateKey: X25519.PrivateKey

    /// The X25519 public key (OPK).
    public var publicKey: X25519.PublicKey { privateKey.publicKey }

    /// Generates a new one-time prekey with `id`.
    /// - Throws: `SessionError.primitive` when libsodium is unusable.
    public init(id: UInt32, using random: any RandomSource = SystemRandomSource()) throws(SessionError) {
        do { privateKey = try X25519.PrivateKey(using: random) } catch { throw SessionError.primitive(error) }
        self.id = id
    }

    /// Loads a one-time prekey from its 32-byte private key.
    /// - Throws: `SessionError.invalidKey` unless exactly 32 bytes are given.
    public init(id: UInt32, privateKey: [UInt8]) throws(SessionError) {
        do { self.privateKey = try X25519.PrivateKey(rawRepresentation: privateKey) } catch { throw .invalidKey }
        self.id = id
    }

    /// Assembles a one-time prekey from a loaded private key.
    init(id: UInt32, privateKey: X25519.PrivateKey) {
        self.id = id
        self.privateKey = privateKey
    }

    /// A redacted description: id and public key only.
    public var description: String { "OneTimePreKey(id: \(id), public: \(publicKey.hexString), secret redacted)" }
    /// A redacted description: id and public key only.
    public var debugDescription: String { description }
}
