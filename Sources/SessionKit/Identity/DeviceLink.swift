import SignalPrimitives

/// Linking a new device to an existing account: every device of a user holds the user's one
/// identity key pair (as in Signal), so safety numbers belong to the user while sessions, prekeys
/// and trust records belong to each device. A new device receives the identity from a device
/// that has it, sealed to a one-use key the new device shows:
///
/// 1. The new device makes a `DeviceLinkRequest` and shows `requestKey` to the existing device
///    as a QR code (never through the server: whoever knows the request key can seal an
///    identity of their own to it).
/// 2. The existing device scans it and sends `DeviceLink.seal(_:to:)`'s bytes to the new device
///    (through the server is fine: only the request's private key opens them).
/// 3. The new device calls `DeviceLinkRequest.open(_:expectingIdentityKey:)`, passing the
///    user's identity public key when it knows it (from the same QR code, or its account), and
///    creates its store with the identity and its own device id: `InMemoryProtocolStore(identity:)`
///    or `SessionKitSQLite`'s `SQLiteProtocolStore`. It then makes its own prekeys
///    (`SessionManager.maintainPreKeys()`) and starts its own sessions.
///
/// The sealed form (the library's, not SPEC's; 81 bytes):
///
///     sealed = 0x01 || E (32) || XChaCha20-Poly1305(key, nonce = 0 (24), seed (32), AAD = 0x01 || E || R)
///     key    = HKDF-SHA256(salt = E || R, ikm = X25519(e, R), info = "SessionKit device link v1", 32)
///
/// where R is the request key and E a fresh ephemeral key (so the all-zero nonce is never
/// reused under one key).
public enum DeviceLink {
    /// The format version byte.
    public static let version: UInt8 = 1
    /// The length of the sealed identity.
    public static let sealedByteCount = 1 + 32 + 32 + XChaCha20Poly1305.tagByteCount
    static let info = Array("SessionKit device link v1".utf8)

    /// Seals `identity` to a new device's request key (step 2).
    /// - Throws: `SessionError.invalidKey` for a request key that is not canonical or gives an
    ///   all-zero shared secret, `.primitive` when libsodium is unusable.
    public static func seal(
        _ identity: IdentityKeyPair, to requestKey: X25519.PublicKey, using random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> [UInt8] {
        guard requestKey.isCanonical else { throw .invalidKey }
        let ephemeral: X25519.PrivateKey
        do { ephemeral = try X25519.PrivateKey(using: random) } catch { throw .primitive(error) }
        let header = [version] + ephemeral.publicKey.rawRepresentation
        let key = try Self.key(ephemeral.sharedSecret(with: requestKey), ephemeral: ephemeral.publicKey, request: requestKey)
        let nonce = [UInt8](repeating: 0, count: XChaCha20Poly1305.nonceByteCount)
        let aad = header + requestKey.rawRepresentation
        var output = [UInt8](repeating: 0, count: 32 + XChaCha20Poly1305.tagByteCount)
        let sealed: Result<Int, CryptoError> = output.withUnsafeMutableBytes { out in
            Result { () throws(CryptoError) -> Int in
                try identity.privateKey.withUnsafeSeedBytes { (seed) throws(CryptoError) -> Int in
                    try key.withUnsafeBytes { (k) throws(CryptoError) -> Int in
                        try nonce.withBytes { (n) throws(CryptoError) -> Int in
                            try aad.withBytes { (a) throws(CryptoError) -> Int in
                                try XChaCha20Poly1305.seal(seed, key: k, nonce: n, authenticating: a, into: out)
                            }
                        }
                    }
                }
            }
        }
        if case let .failure(error) = sealed { throw .primitive(error) }
        return header + output
    }

    /// The sealing key: HKDF over the shared secret, bound to both public keys.
    static func key(
        _ sharedSecret: @autoclosure () throws(CryptoError) -> SymmetricKey, ephemeral: X25519.PublicKey, request: X25519.PublicKey
    ) throws(SessionError) -> SymmetricKey {
        do {
            return try HKDF.deriveKey(
                inputKeyMaterial: try sharedSecret(), salt: ephemeral.rawRepresentation + request.rawRepresentation, info: info,
                outputByteCount: 32)
        } catch .invalidKey {
            throw .invalidKey
        } catch {
            throw .primitive(error)
        }
    }
}

/// A new device's one-use request to receive its user's identity (`DeviceLink`, steps 1 and 3).
/// Its private key is held in zeroing storage and used once.
public struct DeviceLinkRequest: Sendable, CustomStringConvertible {
    private let privateKey: X25519.PrivateKey

    /// The key to show the existing device (as a QR code; never through the server).
    public var requestKey: X25519.PublicKey { privateKey.publicKey }

    /// A fresh request.
    /// - Throws: `SessionError.primitive` when libsodium is unusable.
    public init(using random: any RandomSource = SystemRandomSource()) throws(SessionError) {
        do { privateKey = try X25519.PrivateKey(using: random) } catch { throw .primitive(error) }
    }

    /// Opens the identity the existing device sealed (step 3).
    /// - Parameter sealed: the bytes `DeviceLink.seal` produced for this request.
    /// - Parameter expectedIdentityKey: the user's identity public key, when the new device
    ///   knows it: a sealed identity with another public key is refused.
    /// - Throws: `SessionError.invalidPayload` for a wrong length, `.unsupportedVersion` for
    ///   another version byte, `.invalidMessage` when it does not open (damaged, or sealed to
    ///   another request), `.untrustedIdentity` when its public key is not `expectedIdentityKey`,
    ///   `.invalidKey` for an ephemeral key that gives an all-zero shared secret.
    public func open(_ sealed: [UInt8], expectingIdentityKey expectedIdentityKey: Ed25519.PublicKey? = nil) throws(SessionError) -> IdentityKeyPair {
        guard sealed.count == DeviceLink.sealedByteCount else { throw .invalidPayload }
        guard sealed[0] == DeviceLink.version else { throw .unsupportedVersion }
        let ephemeral: X25519.PublicKey
        do { ephemeral = try X25519.PublicKey(rawRepresentation: Array(sealed[1 ..< 33])) } catch { throw .invalidKey }
        let key = try DeviceLink.key(privateKey.sharedSecret(with: ephemeral), ephemeral: ephemeral, request: requestKey)
        let nonce = [UInt8](repeating: 0, count: XChaCha20Poly1305.nonceByteCount)
        let aad = Array(sealed[0 ..< 33]) + requestKey.rawRepresentation
        let ciphertext = Array(sealed[33...])
        let seed: SecureBytes
        do {
            seed = try SecureBytes(count: 32) { (out) throws(CryptoError) in
                _ = try key.withUnsafeBytes { (k) throws(CryptoError) -> Int in
                    try nonce.withBytes { (n) throws(CryptoError) -> Int in
                        try aad.withBytes { (a) throws(CryptoError) -> Int in
                            try ciphertext.withBytes { (c) throws(CryptoError) -> Int in
                                try XChaCha20Poly1305.open(c, key: k, nonce: n, authenticating: a, into: out)
                            }
                        }
                    }
                }
            }
        } catch {
            throw .invalidMessage
        }
        let identity: IdentityKeyPair
        do { identity = IdentityKeyPair(privateKey: try Ed25519.PrivateKey(seedStorage: seed)) } catch { throw .invalidPayload }
        if let expectedIdentityKey {
            guard ConstantTime.equals(identity.publicKey.rawRepresentation, expectedIdentityKey.rawRepresentation) else {
                throw .untrustedIdentity
            }
        }
        return identity
    }

    /// The request key only.
    public var description: String { "DeviceLinkRequest(\(requestKey), secret redacted)" }
}
