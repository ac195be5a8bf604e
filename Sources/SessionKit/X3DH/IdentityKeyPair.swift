import SignalPrimitives

/// A long-term identity key pair (SPEC §3): an Ed25519 key whose 32-byte seed is the private
/// key. X3DH uses its X25519 form (SPEC §1 ed→x conversions); the public key signs prekeys and
/// is what safety numbers are computed over.
///
/// One per user, shared by all the user's devices (as in Signal): safety numbers belong to the
/// user, while sessions, prekeys and trust records belong to each device. The first device
/// generates it (`init(using:)`); a device added later receives it from one that has it
/// (`DeviceLink`) and creates its store with it and its own device id.
public struct IdentityKeyPair: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The Ed25519 private key (seed).
    public let privateKey: Ed25519.PrivateKey
    /// The X25519 form of the private key (SPEC §1 ed→x private), derived once when the
    /// identity is created or loaded: X3DH needs it for one DH every time, and deriving it
    /// costs a SHA-512 and a fixed-base scalar multiplication (for its public key).
    let agreementKey: X25519.PrivateKey

    /// The Ed25519 public key (IK).
    public var publicKey: Ed25519.PublicKey { privateKey.publicKey }

    /// Generates a new identity from `random` (the system CSPRNG by default).
    /// - Throws: `SessionError.primitive` when libsodium is unusable.
    public init(using random: any RandomSource = SystemRandomSource()) throws(SessionError) {
        let key: Ed25519.PrivateKey
        do { key = try Ed25519.PrivateKey(using: random) } catch { throw SessionError.primitive(error) }
        self.init(privateKey: key)
    }

    /// Loads an identity from its 32-byte Ed25519 seed.
    /// - Throws: `SessionError.invalidKey` unless exactly 32 bytes are given.
    public init(seed: [UInt8]) throws(SessionError) {
        let key: Ed25519.PrivateKey
        do { key = try Ed25519.PrivateKey(seed: seed) } catch { throw SessionError.invalidKey }
        self.init(privateKey: key)
    }

    /// Wraps an existing Ed25519 private key.
    public init(privateKey: Ed25519.PrivateKey) {
        self.privateKey = privateKey
        agreementKey = privateKey.convertToX25519()
    }

    /// A redacted description: the public key only.
    public var description: String { "IdentityKeyPair(public: \(publicKey.hexString), secret redacted)" }
    /// A redacted description: the public key only.
    public var debugDescription: String { description }
}
