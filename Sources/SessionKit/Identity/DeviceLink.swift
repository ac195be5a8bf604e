import SignalPrimitives

/// Linking a new device to an existing account: every device of a user holds the user's one
/// identity key pair (as in Signal), so safety numbers belong to the user while sessions, prekeys
/// and trust records belong to each device. A new device receives the identity from a device
/// that has it, sealed to a one-use request that only the new device's screen shows:
///
/// 1. The new device, once the server has given it its device id, makes a
///    `DeviceLinkRequest(for:)` with its own address and shows `qrPayload` as a QR code. The
///    payload holds the request key, a 32-byte random secret and the new device's address; it
///    never goes through the server (the secret is what shows that the sealing device saw
///    this screen).
/// 2. The existing device scans it, decodes it (`DeviceLinkCode(qrPayload:)`), shows the user
///    which device of theirs is being added (`DeviceLinkCode.address`), and sends
///    `DeviceLink.seal(_:to:from:using:)`'s bytes to the new device (through the server is
///    fine: only the request's private key and the secret open them). It refuses a code for
///    another user's device.
/// 3. The new device calls `DeviceLinkRequest.open(_:expectingIdentityKey:)` with the user's
///    identity public key (required: for example the identity key of the bundles the server
///    publishes for the user's other devices), and creates its store with the identity and
///    its own device id: `InMemoryProtocolStore(identity:)` or `SessionKitSQLite`'s
///    `SQLiteProtocolStore`. It then makes its own prekeys (`SessionManager.maintainPreKeys()`)
///    and starts its own sessions.
///
/// Any failure in step 3 (`SessionError.deviceLinkMismatch` for a seal made without the
/// secret, for another device or user, or holding another identity; a damaged or malformed
/// seal) means one thing: abort this link, tell the user, and start again with a new request.
/// Never retry the same request with another seal, and never fall back to asking the user to
/// accept the identity it holds.
///
/// The format, version 2 (the library's, not SPEC's; the request is 1 + 32 + 32 +
/// len(Encode(address)) bytes, the seal 81):
///
///     qrPayload = 0x02 || R (32) || S (32) || Encode(address)
///     sealed    = 0x02 || E (32) || XChaCha20-Poly1305(key, nonce = 0 (24), seed (32),
///                                                      AAD = 0x02 || E || R || Encode(address))
///     key       = HKDF-SHA256(salt = E || R, ikm = X25519(e, R) || S,
///                             info = "SessionKit device link v2" || Encode(address), 32)
///
/// where R is the request key, S the request's secret, `address` the new device's address
/// (SPEC §1's encoding: user id and device id), E a fresh ephemeral key (so the all-zero nonce
/// is never reused under one key) and seed the identity's 32-byte Ed25519 seed. Whoever knows
/// R but not S (someone who saw only the request key, or the server) cannot make a seal the
/// new device opens, nor can a seal made for one device be opened by another. Version 1 (no
/// secret, no address) is `unsupportedVersion`.
public enum DeviceLink {
    /// The format version byte (of both the QR payload and the seal).
    public static let version: UInt8 = 2
    /// The length of the sealed identity.
    public static let sealedByteCount = 1 + 32 + 32 + XChaCha20Poly1305.tagByteCount
    /// The length of the request's secret.
    public static let secretByteCount = 32
    static let info = Array("SessionKit device link v2".utf8)

    /// Seals `identity` for the new device whose QR code was decoded into `code` (step 2).
    /// - Parameters:
    ///   - identity: the user's identity key pair, which this device holds.
    ///   - code: the new device's request, as scanned from its screen.
    ///   - localAddress: this device's address: the code must name another device of the same
    ///     user.
    ///   - random: the source of the ephemeral key (the system CSPRNG by default).
    /// - Throws: `SessionError.deviceLinkMismatch` when the code names a device of another user
    ///   or this device itself, `.invalidKey` for a request key that gives an all-zero shared
    ///   secret, `.primitive` when libsodium is unusable.
    public static func seal(
        _ identity: IdentityKeyPair, to code: DeviceLinkCode, from localAddress: ProtocolAddress,
        using random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> [UInt8] {
        guard code.address.isSameUser(as: localAddress), code.address.deviceID != localAddress.deviceID else {
            throw .deviceLinkMismatch
        }
        let ephemeral: X25519.PrivateKey
        do { ephemeral = try X25519.PrivateKey(using: random) } catch { throw .primitive(error) }
        let header = [version] + ephemeral.publicKey.rawRepresentation
        let key = try Self.key(
            ephemeral: ephemeral.publicKey, request: code.requestKey, secret: code.secret, address: code.address
        ) { (out) throws(CryptoError) in try ephemeral.sharedSecret(with: code.requestKey, into: out) }
        let nonce = [UInt8](repeating: 0, count: XChaCha20Poly1305.nonceByteCount)
        let aad = header + code.requestKey.rawRepresentation + code.address.encoded
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

    /// The sealing key: HKDF over the shared secret and the request's secret, salted with both
    /// public keys and bound to the new device's address. The input key material is assembled
    /// in zeroing storage; `sharedSecret` writes X25519(·, ·) into its first 32 bytes.
    static func key(
        ephemeral: X25519.PublicKey, request: X25519.PublicKey, secret: SecureBytes, address: ProtocolAddress,
        sharedSecret: (UnsafeMutableRawBufferPointer) throws(CryptoError) -> Void
    ) throws(SessionError) -> SymmetricKey {
        do {
            let ikm = try SecureBytes(count: X25519.keyByteCount + secretByteCount) { (out) throws(CryptoError) in
                try sharedSecret(UnsafeMutableRawBufferPointer(rebasing: out[0 ..< X25519.keyByteCount]))
                secret.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[X25519.keyByteCount...]).copyMemory(from: $0) }
            }
            return try HKDF.deriveKey(
                inputKeyMaterial: SymmetricKey(storage: ikm), salt: ephemeral.rawRepresentation + request.rawRepresentation,
                info: info + address.encoded, outputByteCount: 32)
        } catch .invalidKey {
            throw .invalidKey
        } catch {
            throw .primitive(error)
        }
    }
}

/// A new device's one-use request to receive its user's identity (`DeviceLink`, steps 1 and 3):
/// a request key pair and a 32-byte secret, both in zeroing storage, for the new device's own
/// address. Show `qrPayload` on the new device's screen only, and use the request once.
public struct DeviceLinkRequest: Sendable, CustomStringConvertible {
    private let privateKey: X25519.PrivateKey
    private let secret: SecureBytes

    /// The new device's own address (its user id and the device id the server gave it): the
    /// identity is sealed for this address and opens only for it.
    public let address: ProtocolAddress

    /// The request key (also inside `qrPayload`).
    public var requestKey: X25519.PublicKey { privateKey.publicKey }

    /// A fresh request for the new device at `address`: the request key is drawn first, then
    /// the secret.
    /// - Throws: `SessionError.primitive` when libsodium is unusable.
    public init(for address: ProtocolAddress, using random: any RandomSource = SystemRandomSource()) throws(SessionError) {
        do { privateKey = try X25519.PrivateKey(using: random) } catch { throw .primitive(error) }
        secret = SecureBytes(count: DeviceLink.secretByteCount) { random.fill($0) }
        self.address = address
    }

    /// What the QR code shows: `0x02 || R || S || Encode(address)` (see `DeviceLink`). It holds
    /// the secret: show it on this device's screen only, never send it through the server, and
    /// wipe the array (`SecureMemory.zero`) once the code is no longer shown.
    public var qrPayload: [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(1 + 32 + DeviceLink.secretByteCount + address.encoded.count)
        payload.append(DeviceLink.version)
        payload += requestKey.rawRepresentation
        secret.withUnsafeBytes { payload.append(contentsOf: $0) }
        payload += address.encoded
        return payload
    }

    /// Opens the identity the existing device sealed (step 3).
    /// - Parameter sealed: the bytes `DeviceLink.seal` produced for this request.
    /// - Parameter expectedIdentityKey: the user's identity public key, as the account
    ///   publishes it: a sealed identity with another public key is refused.
    /// - Throws: `SessionError.invalidPayload` for a wrong length, `.unsupportedVersion` for
    ///   another version byte (version 1's included), `.invalidKey` for an ephemeral key that
    ///   gives an all-zero shared secret, and `.deviceLinkMismatch` when the seal does not open
    ///   for this request (made without its secret, for another request, device or user, or
    ///   damaged: these cannot be told apart) or holds an identity whose public key is not
    ///   `expectedIdentityKey`. Whatever the error, abort the link (see `DeviceLink`).
    public func open(_ sealed: [UInt8], expectingIdentityKey expectedIdentityKey: Ed25519.PublicKey) throws(SessionError) -> IdentityKeyPair {
        guard sealed.count == DeviceLink.sealedByteCount else { throw .invalidPayload }
        guard sealed[0] == DeviceLink.version else { throw .unsupportedVersion }
        let ephemeral: X25519.PublicKey
        do { ephemeral = try X25519.PublicKey(rawRepresentation: Array(sealed[1 ..< 33])) } catch { throw .invalidKey }
        let key = try DeviceLink.key(ephemeral: ephemeral, request: requestKey, secret: secret, address: address) {
            (out) throws(CryptoError) in try privateKey.sharedSecret(with: ephemeral, into: out)
        }
        let nonce = [UInt8](repeating: 0, count: XChaCha20Poly1305.nonceByteCount)
        let aad = Array(sealed[0 ..< 33]) + requestKey.rawRepresentation + address.encoded
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
            throw .deviceLinkMismatch
        }
        let identity: IdentityKeyPair
        do { identity = IdentityKeyPair(privateKey: try Ed25519.PrivateKey(seedStorage: seed)) } catch { throw .deviceLinkMismatch }
        guard ConstantTime.equals(identity.publicKey.rawRepresentation, expectedIdentityKey.rawRepresentation) else {
            throw .deviceLinkMismatch
        }
        return identity
    }

    /// The request key and the address only.
    public var description: String { "DeviceLinkRequest(\(requestKey), for: \(address), secret redacted)" }
}

/// A new device's request as the existing device scanned it from its QR code
/// (`DeviceLinkRequest.qrPayload`): the request key, the secret and the new device's address.
/// Pass it to `DeviceLink.seal(_:to:from:using:)`. The secret is held in zeroing storage.
public struct DeviceLinkCode: Sendable, CustomStringConvertible {
    /// The new device's request key.
    public let requestKey: X25519.PublicKey
    /// The new device's address: show the user which device is being linked.
    public let address: ProtocolAddress
    /// The request's secret (S).
    let secret: SecureBytes

    /// Decodes a scanned QR payload, strictly.
    /// - Throws: `SessionError.invalidPayload` for an empty payload, a wrong length, an empty
    ///   user id, a user id that is not UTF-8, or trailing bytes; `.unsupportedVersion` for a
    ///   first byte other than `DeviceLink.version`; `.invalidKey` for a request key that is
    ///   not canonical.
    public init(qrPayload payload: [UInt8]) throws(SessionError) {
        guard let first = payload.first else { throw .invalidPayload }
        guard first == DeviceLink.version else { throw .unsupportedVersion }
        let fixed = 1 + X25519.keyByteCount + DeviceLink.secretByteCount
        guard payload.count > fixed else { throw .invalidPayload }
        let userIDCount = Int(payload[fixed])
        guard userIDCount >= 1, payload.count == fixed + 1 + userIDCount + 4 else { throw .invalidPayload }
        let userIDBytes = Array(payload[(fixed + 1) ..< (fixed + 1 + userIDCount)])
        guard let userID = String(validating: userIDBytes, as: UTF8.self) else { throw .invalidPayload }
        let deviceID = payload[(fixed + 1 + userIDCount)...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let address: ProtocolAddress
        do { address = try ProtocolAddress(userID: userID, deviceID: deviceID) } catch { throw .invalidPayload }
        guard address.userIDBytes.elementsEqual(userIDBytes) else { throw .invalidPayload }
        do { requestKey = try X25519.PublicKey(canonicalRepresentation: Array(payload[1 ..< 33])) } catch { throw .invalidKey }
        secret = payload.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[33 ..< fixed])) }
        self.address = address
    }

    /// The request key and the address only.
    public var description: String { "DeviceLinkCode(\(requestKey), for: \(address), secret redacted)" }
}
