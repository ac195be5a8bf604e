import SignalPrimitives

/// The result of encapsulating to an encapsulation key: the ciphertext to send and the shared
/// secret SS that X3DH appends to its input key material (SPEC §3).
public struct KEMEncapsulation: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Bytes of an ML-KEM-768 ciphertext.
    public static let ciphertextByteCount = 1088
    /// Bytes of the shared secret.
    public static let sharedSecretByteCount = 32

    /// The ciphertext CT (1088 bytes), sent in the prekey message.
    public let ciphertext: [UInt8]
    /// The shared secret SS (32 bytes).
    public let sharedSecret: SecureBytes

    /// Wraps an encapsulation.
    /// - Throws: `SessionError.invalidMessage` for a ciphertext that is not 1088 bytes,
    ///   `SessionError.invalidKey` for a shared secret that is not 32 bytes.
    public init(ciphertext: [UInt8], sharedSecret: SecureBytes) throws(SessionError) {
        guard ciphertext.count == Self.ciphertextByteCount else { throw .invalidMessage }
        guard sharedSecret.count == Self.sharedSecretByteCount else { throw .invalidKey }
        self.ciphertext = ciphertext
        self.sharedSecret = sharedSecret
    }

    /// A redacted description.
    public var description: String { "KEMEncapsulation(ciphertext: \(ciphertext.count) bytes, secret redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
}

/// The post-quantum KEM of SPEC §1 (ML-KEM-768, FIPS 203), as SessionKit uses it for the
/// optional KEM prekey of X3DH (SPEC §3).
///
/// SessionKit depends on libsodium only; the implementation comes from an adapter module, such
/// as `SessionKitMLKEM`'s `SwiftCryptoMLKEM768` (apple/swift-crypto: BoringSSL on Linux,
/// CryptoKit on Apple platforms). Pass one to `SessionManager` to publish KEM prekeys and start
/// hybrid sessions; without one, a manager refuses bundles that carry a KEM prekey.
///
/// Requirements on an implementation (SPEC §3): it must be ML-KEM-768 exactly (so that peers
/// agree), keep ML-KEM's binding of the shared secret to the key and the ciphertext, and work
/// from seeds: private keys are stored as their 64-byte seed `d || z` only.
public protocol KeyEncapsulationMechanism: Sendable {
    /// The encapsulation key of the key pair that key generation (FIPS 203
    /// ML-KEM.KeyGen_internal) derives from `seed` (`d || z`).
    /// - Throws: `SessionError.invalidKey` for a seed that is not 64 bytes,
    ///   `SessionError.primitive` when the implementation fails.
    func encapsulationKey(fromSeed seed: SecureBytes) throws(SessionError) -> KEMEncapsulationKey

    /// Encapsulates a fresh shared secret to `key`, with randomness of the implementation's own.
    /// - Throws: `SessionError.invalidKey` when the implementation refuses the key,
    ///   `SessionError.primitive` when it fails.
    func encapsulate(to key: KEMEncapsulationKey) throws(SessionError) -> KEMEncapsulation

    /// Decapsulates `ciphertext` with the private key generated from `seed`. A well-formed
    /// ciphertext never fails (implicit rejection gives a pseudorandom secret).
    /// - Throws: `SessionError.invalidMessage` for a ciphertext that is not 1088 bytes,
    ///   `SessionError.invalidKey` for a seed that is not 64 bytes, `SessionError.primitive`
    ///   when the implementation fails.
    func decapsulate(_ ciphertext: [UInt8], seed: SecureBytes) throws(SessionError) -> SecureBytes
}

/// Constants of the KEM prekeys (SPEC §1).
public enum KEMSeed {
    /// Bytes of a KEM private key stored as its seed `d || z`.
    public static let byteCount = 64
}
