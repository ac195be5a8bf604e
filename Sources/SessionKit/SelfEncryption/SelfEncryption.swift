import SignalPrimitives

/// Encryption to oneself (SPEC §6): what every device of the user, including future ones,
/// must be able to read (history kept on a server for new devices, an export, a local cache).
/// Every device with the identity key derives the same key:
///
///     self_key = HKDF(ZERO32, identity seed, "SessionKit Self v2", 32)
///     sealed   = 0x25 || nonce (24, random) || XChaCha20-Poly1305(self_key, nonce, pad(plaintext),
///                                                              aad = 0x25 || nonce || context)
///
/// `context` binds a blob to where it belongs (a conversation id, a cache name); opening with
/// another context fails. Random 192-bit nonces keep the long-lived key safe for far more
/// blobs than any device will seal.
///
/// No forward secrecy: whoever later obtains the identity seed opens every blob ever sealed
/// with it. Send live copies of a message to the user's other devices through their sessions
/// (`SessionManager.encrypt(_:toUser:includingOwnDevices:)`), like any recipient.
public struct SelfEncryption: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Bytes before the ciphertext: type byte and nonce.
    @_spi(Testing) public static let headerByteCount = 1 + XChaCha20Poly1305.nonceByteCount
    /// The shortest blob that can authenticate: type byte, nonce and a bare tag (41 bytes).
    @_spi(Testing) public static let minimumByteCount = headerByteCount + XChaCha20Poly1305.tagByteCount

    private let key: SecureBytes
    private let random: any RandomSource

    /// Derives the self key from `identityKey`'s seed. `random` supplies the nonces (the
    /// system CSPRNG by default; pass another source only for tests and vectors).
    public init(identityKey: Ed25519.PrivateKey, using random: any RandomSource = SystemRandomSource()) {
        key = SecureBytes(count: XChaCha20Poly1305.keyByteCount) { (out: UnsafeMutableRawBufferPointer) in
            identityKey.withUnsafeSeedBytes { seed in
                ProtocolInfo.selfEncryption.withUnsafeBytes { info in
                    // 32 bytes is far below HKDF's limit, so this cannot fail.
                    try? ZeroSaltHKDF.extractor.deriveKey(inputKeyMaterial: seed, info: info, into: out)
                }
            }
        }
        self.random = random
    }

    /// Pads and seals `plaintext` under a fresh random nonce, bound to `context`.
    /// - Throws: `SessionError.invalidMessage` for a plaintext too long to pad, and
    ///   `SessionError.primitive` when libsodium is unusable.
    public func seal(_ plaintext: [UInt8], context: [UInt8] = []) throws(SessionError) -> [UInt8] {
        let paddedCount = try MessagePadding.checkedPaddedLength(forPlaintextCount: plaintext.count)
        var sealed = [UInt8](repeating: 0, count: Self.headerByteCount + paddedCount + XChaCha20Poly1305.tagByteCount)
        sealed[0] = WireType.selfEncrypted
        try sealed.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(SessionError) in
            let nonce = out.slice(1 ..< Self.headerByteCount)
            random.fill(nonce)
            let aad = Array(UnsafeRawBufferPointer(out.slice(0 ..< Self.headerByteCount))) + context
            try plaintext.withBytes { (input: UnsafeRawBufferPointer) throws(SessionError) in
                try aad.withBytes { (aadBytes: UnsafeRawBufferPointer) throws(SessionError) in
                    try key.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws(SessionError) in
                        try PaddedAEAD.seal(input, key: k, nonce: UnsafeRawBufferPointer(nonce), authenticating: aadBytes,
                                            into: out.slice(Self.headerByteCount ..< out.count), cipher: .xchacha20poly1305)
                    }
                }
            }
        }
        return sealed
    }

    /// Opens a blob made by `seal` with the same identity key and `context`.
    /// - Throws: `SessionError.invalidMessage` for an empty or short input (under 41 bytes), a
    ///   wrong key or context, or a tag that does not verify; `SessionError.unsupportedVersion`
    ///   when the first byte is not 0x25 (version 1's 0x20 included);
    ///   `SessionError.invalidPadding` when the authentic plaintext does not unpad.
    public func open(_ sealed: [UInt8], context: [UInt8] = []) throws(SessionError) -> [UInt8] {
        guard let type = sealed.first else { throw .invalidMessage }
        guard type == WireType.selfEncrypted else { throw .unsupportedVersion }
        guard sealed.count >= Self.minimumByteCount else { throw .invalidMessage }
        let aad = Array(sealed[0 ..< Self.headerByteCount]) + context
        return try sealed.withBytes { (all: UnsafeRawBufferPointer) throws(SessionError) in
            try aad.withBytes { (aadBytes: UnsafeRawBufferPointer) throws(SessionError) in
                try key.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws(SessionError) in
                    try PaddedAEAD.open(all.slice(Self.headerByteCount ..< all.count), key: k,
                                        nonce: all.slice(1 ..< Self.headerByteCount),
                                        authenticating: aadBytes, cipher: .xchacha20poly1305)
                }
            }
        }
    }

    /// A redacted description.
    public var description: String { "SelfEncryption(key redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
}
