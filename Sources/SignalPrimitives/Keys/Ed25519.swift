import CSodium

/// Ed25519 signatures (RFC 8032, pure) through libsodium.
public enum Ed25519 {
    /// The length of a seed (private key) and of a public key.
    public static let keyByteCount = 32
    /// The length of a signature.
    public static let signatureByteCount = 64

    /// An Ed25519 private key: the 32-byte seed, held in zeroing storage together with
    /// libsodium's 64-byte expanded signing key.
    public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        @usableFromInline let seed: SecureBytes
        @usableFromInline let signingKey: SecureBytes
        /// The matching public key.
        public let publicKey: PublicKey

        /// Generates a new key from `random` (the system CSPRNG by default).
        /// - Throws: `CryptoError.libraryInitializationFailed` when libsodium is unusable.
        public init(using random: any RandomSource = SystemRandomSource()) throws(CryptoError) {
            try self.init(seedStorage: SecureBytes(count: keyByteCount) { random.fill($0) })
        }

        /// Loads a key from its 32-byte seed.
        /// - Throws: `CryptoError.invalidKeyLength` unless exactly 32 bytes are given.
        public init(seed: [UInt8]) throws(CryptoError) {
            try self.init(seedStorage: SecureBytes(copying: seed))
        }

        /// Takes ownership of a 32-byte seed in secure storage.
        /// - Throws: `CryptoError.invalidKeyLength` unless exactly 32 bytes are given.
        public init(seedStorage: SecureBytes) throws(CryptoError) {
            try Sodium.ensureInitialized()
            guard seedStorage.count == keyByteCount else {
                throw .invalidKeyLength(expected: keyByteCount, actual: seedStorage.count)
            }
            var pk = ByteArrays.zeroed32()
            let signingKey = SecureBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { (sk: UnsafeMutableRawBufferPointer) in
                seedStorage.withUnsafeBytes { s in
                    pk.withUnsafeMutableBytes { p in
                        _ = crypto_sign_seed_keypair(p.u8,
                                                     sk.u8,
                                                     s.u8)
                    }
                }
            }
            self.seed = seedStorage
            self.signingKey = signingKey
            self.publicKey = PublicKey(uncheckedBytes: pk)
        }

        /// A copy of the 32-byte seed. Wipe it (`SecureMemory.zero`) when done.
        public var seedRepresentation: [UInt8] { seed.bytes }

        /// Calls `body` with the 32-byte seed. Do not let the pointer escape.
        @inlinable
        public func withUnsafeSeedBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
            try seed.withUnsafeBytes(body)
        }

        /// Signs `message` into `output` (64 bytes).
        /// - Throws: `CryptoError.bufferTooSmall` when `output` is shorter than 64 bytes.
        public func signature(for message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(CryptoError) {
            guard output.count >= signatureByteCount, let out = output.baseAddress else {
                throw .bufferTooSmall(required: signatureByteCount, actual: output.count)
            }
            signingKey.withUnsafeBytes { sk in
                _ = crypto_sign_detached(out.assumingMemoryBound(to: UInt8.self), nil,
                                         message.u8, UInt64(message.count),
                                         sk.u8)
            }
        }

        /// The 64-byte deterministic Ed25519 signature of `message`.
        public func signature(for message: [UInt8]) -> [UInt8] {
            var sig = ByteArrays.zeroed64()
            message.withUnsafeBytes { m in
                sig.withUnsafeMutableBytes { s in
                    // The buffer is exactly 64 bytes, so this cannot fail.
                    try? signature(for: m, into: s)
                }
            }
            return sig
        }

        /// A redacted description: the public key only.
        public var description: String { "Ed25519.PrivateKey(public: \(publicKey.hexString), secret redacted)" }
        /// A redacted description: the public key only.
        public var debugDescription: String { description }
    }

    /// An Ed25519 public key (32 bytes).
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        /// The 32 raw bytes.
        public let rawRepresentation: [UInt8]

        /// Hashes the 32 bytes in one call (not one call per byte, as an array's hash does).
        public func hash(into hasher: inout Hasher) { rawRepresentation.withUnsafeBytes { hasher.combine(bytes: $0) } }

        /// Wraps 32 raw bytes (only the length is checked; verification rejects bad points).
        /// - Throws: `CryptoError.invalidKeyLength` unless exactly 32 bytes are given.
        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            guard rawRepresentation.count == keyByteCount else {
                throw .invalidKeyLength(expected: keyByteCount, actual: rawRepresentation.count)
            }
            self.rawRepresentation = rawRepresentation
        }

        init(uncheckedBytes: [UInt8]) { rawRepresentation = uncheckedBytes }

        /// Whether `signature` is a valid signature of `message` under this key, by libsodium's
        /// strict `crypto_sign_verify_detached` (it rejects non-canonical S and small-order R and A).
        /// A signature of the wrong length is invalid.
        public func isValidSignature(_ signature: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer) -> Bool {
            guard Sodium.isInitialized, signature.count == signatureByteCount else { return false }
            return rawRepresentation.withUnsafeBytes { pk in
                crypto_sign_verify_detached(signature.u8,
                                            message.u8, UInt64(message.count),
                                            pk.u8) == 0
            }
        }

        /// Whether `signature` is a valid signature of `message` under this key (strict verification).
        public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            signature.withUnsafeBytes { s in message.withUnsafeBytes { m in isValidSignature(s, for: m) } }
        }

        /// Whether the key is a valid point: canonical, on the curve, not of small order and in
        /// the prime-order subgroup (`crypto_core_ed25519_is_valid_point`). `false` also when
        /// the linked libsodium failed its self-check (`Sodium.pointValidationIsSound`); use
        /// `validatePoint()` to tell the two apart.
        public var isValidPoint: Bool { (try? validatePoint()) != nil }

        /// Checks that the key is a valid point (see `isValidPoint`).
        /// - Throws: `CryptoError.invalidKey` for an invalid point,
        ///   `CryptoError.unsoundPointValidation` when the linked libsodium's point validation
        ///   accepts mixed-order points (SPEC §1's self-check), and
        ///   `CryptoError.libraryInitializationFailed` when libsodium is unusable.
        public func validatePoint() throws(CryptoError) {
            try validatePoint(libraryIsSound: Sodium.pointValidationIsSound)
        }

        /// `validatePoint()` against a given outcome of the self-check (tests force `false`).
        func validatePoint(libraryIsSound: Bool) throws(CryptoError) {
            try Sodium.ensureInitialized()
            guard libraryIsSound else { throw .unsoundPointValidation }
            let valid = rawRepresentation.withUnsafeBytes { crypto_core_ed25519_is_valid_point($0.u8) == 1 }
            guard valid else { throw .invalidKey }
        }

        /// Lowercase hex of the key.
        public var hexString: String { Hex.encode(rawRepresentation) }

        /// The key in hex.
        public var description: String { "Ed25519.PublicKey(\(hexString))" }
    }
}
