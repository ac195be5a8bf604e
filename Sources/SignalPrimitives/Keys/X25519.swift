import CSodium

/// X25519 Diffie–Hellman (RFC 7748) through libsodium.
public enum X25519 {
    /// The length of private keys, public keys and shared secrets.
    public static let keyByteCount = 32
    /// The type byte of the Signal encoding of a public key (`0x05 || pk`).
    public static let signalKeyType: UInt8 = 0x05

    /// An X25519 private key: 32 random bytes, stored unclamped in zeroing storage
    /// (libsodium clamps when it uses the key).
    public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        @usableFromInline let storage: SecureBytes
        /// The matching public key, X25519(sk, 9).
        public let publicKey: PublicKey

        /// Generates a new key from `random` (the system CSPRNG by default).
        /// - Throws: `CryptoError.libraryInitializationFailed` when libsodium is unusable.
        public init(using random: any RandomSource = SystemRandomSource()) throws(CryptoError) {
            try Sodium.ensureInitialized()
            let storage = SecureBytes(count: keyByteCount) { random.fill($0) }
            self.storage = storage
            self.publicKey = PublicKey(derivingFrom: storage)
        }

        /// Loads a private key from its 32 raw bytes.
        /// - Throws: `CryptoError.invalidKeyLength` unless exactly 32 bytes are given.
        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            try self.init(bytes: SecureBytes(copying: rawRepresentation))
        }

        /// Takes ownership of 32 secret bytes in secure storage.
        /// - Throws: `CryptoError.invalidKeyLength` unless exactly 32 bytes are given.
        public init(bytes storage: SecureBytes) throws(CryptoError) {
            try Sodium.ensureInitialized()
            guard storage.count == keyByteCount else {
                throw .invalidKeyLength(expected: keyByteCount, actual: storage.count)
            }
            self.storage = storage
            self.publicKey = PublicKey(derivingFrom: storage)
        }

        /// Wraps 32 secret bytes the library produced itself (for example a converted Ed25519
        /// seed); only the length can be wrong, and the callers always pass 32 bytes.
        init(exactly32 storage: SecureBytes) {
            self.storage = storage
            self.publicKey = PublicKey(derivingFrom: storage)
        }

        /// A copy of the 32 raw private-key bytes. Wipe it (`SecureMemory.zero`) when done.
        public var rawRepresentation: [UInt8] { storage.bytes }

        /// Calls `body` with the 32 private-key bytes. Do not let the pointer escape.
        @inlinable
        public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
            try storage.withUnsafeBytes(body)
        }

        /// X25519(sk, pk) into `output` (32 bytes).
        /// - Throws: `CryptoError.invalidKey` when the result is all zeros (a small-order `pk`),
        ///   `CryptoError.bufferTooSmall` for a short buffer.
        @inlinable
        public func sharedSecret(with publicKey: PublicKey, into output: UnsafeMutableRawBufferPointer) throws(CryptoError) {
            guard output.count >= keyByteCount, let out = output.baseAddress else {
                throw .bufferTooSmall(required: keyByteCount, actual: output.count)
            }
            let rc = storage.withUnsafeBytes { sk in
                publicKey.rawRepresentation.withUnsafeBytes { pk in
                    crypto_scalarmult(out.assumingMemoryBound(to: UInt8.self),
                                      sk.u8,
                                      pk.u8)
                }
            }
            guard rc == 0 else {
                sodium_memzero(out, keyByteCount)
                throw .invalidKey
            }
        }

        /// X25519(sk, pk) as a secret.
        /// - Throws: `CryptoError.invalidKey` when the result is all zeros (a small-order `pk`).
        public func sharedSecret(with publicKey: PublicKey) throws(CryptoError) -> SymmetricKey {
            let storage = try SecureBytes(count: keyByteCount) { (out: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                try sharedSecret(with: publicKey, into: out)
            }
            return SymmetricKey(storage: storage)
        }

        /// A redacted description: the public key only.
        public var description: String { "X25519.PrivateKey(public: \(publicKey.hexString), secret redacted)" }
        /// A redacted description: the public key only.
        public var debugDescription: String { description }
    }

    /// An X25519 public key: 32 bytes (a little-endian u-coordinate).
    ///
    /// Any 32 bytes are accepted, as RFC 7748 requires of the primitive. The protocol rejects
    /// non-canonical keys on the wire with `init(canonicalRepresentation:)`.
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        /// The 32 raw bytes.
        public let rawRepresentation: [UInt8]

        /// Hashes the 32 bytes in one call (not one call per byte, as an array's hash does).
        public func hash(into hasher: inout Hasher) { rawRepresentation.withUnsafeBytes { hasher.combine(bytes: $0) } }

        /// Wraps 32 raw bytes.
        /// - Throws: `CryptoError.invalidKeyLength` unless exactly 32 bytes are given.
        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            guard rawRepresentation.count == keyByteCount else {
                throw .invalidKeyLength(expected: keyByteCount, actual: rawRepresentation.count)
            }
            self.rawRepresentation = rawRepresentation
        }

        /// Wraps 32 raw bytes that must be canonical (bit 255 clear and u < p).
        /// - Throws: `CryptoError.invalidKeyLength` for a wrong length, `CryptoError.invalidKey`
        ///   for a non-canonical encoding.
        public init(canonicalRepresentation bytes: [UInt8]) throws(CryptoError) {
            try self.init(rawRepresentation: bytes)
            guard isCanonical else { throw .invalidKey }
        }

        /// Decodes the Signal encoding `0x05 || pk` (33 bytes); the key must be canonical.
        /// - Throws: `CryptoError.invalidKeyLength` for a wrong length, `CryptoError.invalidKey`
        ///   for another type byte or a non-canonical key.
        public init(signalEncoding bytes: [UInt8]) throws(CryptoError) {
            guard bytes.count == keyByteCount + 1 else {
                throw .invalidKeyLength(expected: keyByteCount + 1, actual: bytes.count)
            }
            guard bytes[0] == signalKeyType else { throw .invalidKey }
            try self.init(canonicalRepresentation: Array(bytes[1...]))
        }

        /// X25519(secret, 9): through the Ed25519 fixed-base table (`X25519FixedBase`), with
        /// libsodium's ladder as the fallback should that route ever fail.
        /// X25519(secret, 9) through the Ed25519 fixed-base table (`X25519FixedBase`), with
        /// libsodium's ladder as the fallback.
        ///
        /// This cannot fail for any 32 bytes: X25519 clamps the scalar to 8·k with
        /// 2^251 ≤ k < 2^252, and the base point has prime order L > 2^252, so the product is
        /// never the identity and `crypto_scalarmult_base` never reports an all-zero result.
        init(derivingFrom secret: SecureBytes) {
            var pk = ByteArrays.zeroed32()
            secret.withUnsafeBytes { sk in
                pk.withUnsafeMutableBytes { out in
                    if !X25519FixedBase.publicKey(secret: sk, into: out) {
                        _ = crypto_scalarmult_base(out.u8, sk.u8)
                    }
                }
            }
            self.rawRepresentation = pk
        }

        /// Whether the encoding is canonical: bit 255 clear and the u-coordinate below 2^255 − 19.
        public var isCanonical: Bool { FieldElement.isCanonicalEncoding(rawRepresentation) }

        /// The Signal encoding `0x05 || pk` (33 bytes) used in signatures and fingerprints.
        public var signalEncoding: [UInt8] { [signalKeyType] + rawRepresentation }

        /// Lowercase hex of the key.
        public var hexString: String { Hex.encode(rawRepresentation) }

        /// The key in hex.
        public var description: String { "X25519.PublicKey(\(hexString))" }
    }
}
