import SignalPrimitives

/// Encryption to oneself (SPEC §6): our own copies of sent messages for our other devices,
/// and encrypted local caches. Every device with the identity key derives the same key:
///
///     self_key = HKDF(ZERO32, identity seed, "SessionKit Self v1", 32)
///     sealed   = 0x20 || nonce (12, random) || AES-256-GCM(self_key, nonce, pad(plaintext),
///                                                      aad = 0x20 || nonce || context)
///
/// `context` binds a blob to where it belongs (a conversation id, a cache name); opening with
/// another context fails. The nonce is random, so never seal more than about 2^32 blobs
/// under one identity key.
public struct SelfEncryption: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Bytes before the ciphertext: version and nonce.
    public static let headerByteCount = 1 + AES256GCM.nonceByteCount
    /// The shortest blob that can authenticate: version, nonce and a bare tag.
    public static let minimumByteCount = headerByteCount + AES256GCM.tagByteCount

    private let key: SecureBytes
    private let random: any RandomSource

    /// Derives the self key from `identityKey`'s seed. `random` supplies the nonces (the
    /// system CSPRNG by default; pass another source only for tests and vectors).
    public init(identityKey: Ed25519.PrivateKey, using random: any RandomSource = SystemRandomSource()) {
        key = SecureBytes(count: AES256GCM.keyByteCount) { (out: UnsafeMutableRawBufferPointer) in
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
    ///   `SessionError.primitive` when AES-GCM is unavailable.
    public func seal(_ plaintext: [UInt8], context: [UInt8] = []) throws(SessionError) -> [UInt8] {
        let paddedCount = try MessagePadding.checkedPaddedLength(forPlaintextCount: plaintext.count)
        var sealed = [UInt8](repeating: 0, count: Self.headerByteCount + paddedCount + AES256GCM.tagByteCount)
        sealed[0] = WireType.selfEncrypted
        var aad = [UInt8]()
        try sealed.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(SessionError) in
            let nonce = UnsafeMutableRawBufferPointer(rebasing: out[1 ..< Self.headerByteCount])
            random.fill(nonce)
            aad = Array(UnsafeRawBufferPointer(rebasing: out[0 ..< Self.headerByteCount])) + context
            try plaintext.withBytes { (input: UnsafeRawBufferPointer) throws(SessionError) in
                try aad.withBytes { (aadBytes: UnsafeRawBufferPointer) throws(SessionError) in
                    try key.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws(SessionError) in
                        try PaddedAEAD.seal(input, key: k, nonce: UnsafeRawBufferPointer(nonce), authenticating: aadBytes,
                                            into: UnsafeMutableRawBufferPointer(rebasing: out[Self.headerByteCount...]))
                    }
                }
            }
        }
        return sealed
    }

    /// Opens a blob made by `seal` with the same identity key and `context`.
    /// - Throws: `SessionError.invalidMessage` for an empty or short input (under 29 bytes), a
    ///   wrong key or context, or a tag that does not verify; `SessionError.unsupportedVersion`
    ///   when the first byte is not 0x20; `SessionError.invalidPadding` when the authentic
    ///   plaintext does not unpad.
    public func open(_ sealed: [UInt8], context: [UInt8] = []) throws(SessionError) -> [UInt8] {
        guard let version = sealed.first else { throw .invalidMessage }
        guard version == WireType.selfEncrypted else { throw .unsupportedVersion }
        guard sealed.count >= Self.minimumByteCount else { throw .invalidMessage }
        let aad = Array(sealed[0 ..< Self.headerByteCount]) + context
        return try sealed.withBytes { (all: UnsafeRawBufferPointer) throws(SessionError) in
            try aad.withBytes { (aadBytes: UnsafeRawBufferPointer) throws(SessionError) in
                try key.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws(SessionError) in
                    try PaddedAEAD.open(UnsafeRawBufferPointer(rebasing: all[Self.headerByteCount...]), key: k,
                                        nonce: UnsafeRawBufferPointer(rebasing: all[1 ..< Self.headerByteCount]),
                                        authenticating: aadBytes)
                }
            }
        }
    }

    /// A redacted description.
    public var description: String { "SelfEncryption(key redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
}
