import SignalPrimitives

/// Computes safety numbers (SPEC §7), byte-compatible with libsignal's
/// `NumericFingerprintGenerator`, with a fixed iteration count and an optional cache.
///
/// A fingerprint costs `2 × iterations` SHA-512 computations. The generator keeps the last few
/// per-party hashes (keyed by identity key and identifier), so computing the safety numbers of
/// many contacts hashes the local party's half once. Pass `cacheCapacity: 0` to disable the
/// cache (for example to measure the raw cost).
public struct FingerprintGenerator: Sendable {
    /// The iteration count libsignal and Signal use: 5200.
    public static let defaultIterations = 5200
    /// The accepted iteration counts: 1 < iterations ≤ 1,000,000.
    public static let iterationRange: ClosedRange<Int> = 2 ... 1_000_000
    /// The default number of cached per-party hashes.
    public static let defaultCacheCapacity = 16

    /// The number of SHA-512 rounds per party.
    public let iterations: Int
    private let cache: FingerprintCache?

    /// A generator running `iterations` rounds per party.
    /// - Parameters:
    ///   - iterations: rounds per party, `2...1_000_000` (default 5200).
    ///   - cacheCapacity: how many per-party hashes to keep (0 disables caching).
    /// - Throws: `VerificationError.invalidIterations` when `iterations` is out of range.
    public init(iterations: Int = defaultIterations, cacheCapacity: Int = defaultCacheCapacity) throws(VerificationError) {
        guard Self.iterationRange.contains(iterations) else { throw .invalidIterations(iterations) }
        self.iterations = iterations
        cache = cacheCapacity > 0 ? FingerprintCache(capacity: cacheCapacity) : nil
    }

    /// The fingerprint between the local party and a remote party.
    ///
    /// `version` is the scannable fingerprint's version (libsignal uses 1 for phone-number
    /// identifiers and 2 for service ids; the displayable number does not depend on it). The
    /// identity keys and identifiers are opaque bytes (in this protocol the 32-byte Ed25519
    /// identity key and the UTF-8 user id).
    @_spi(Testing) public func fingerprint(version: UInt32,
                            localIdentifier: [UInt8], localIdentityKey: [UInt8],
                            remoteIdentifier: [UInt8], remoteIdentityKey: [UInt8]) -> Fingerprint {
        let local = hash(identifier: localIdentifier, identityKey: localIdentityKey)
        let remote = hash(identifier: remoteIdentifier, identityKey: remoteIdentityKey)
        return Fingerprint(version: version, localHash: local, remoteHash: remote)
    }

    /// The fingerprint between two users of this protocol: the identifiers are the UTF-8 bytes
    /// of the user ids (never normalised) and the keys the 32-byte Ed25519 identity keys.
    public func fingerprint(version: UInt32,
                            localUserID: String, localIdentityKey: Ed25519.PublicKey,
                            remoteUserID: String, remoteIdentityKey: Ed25519.PublicKey) -> Fingerprint {
        fingerprint(version: version,
                    localIdentifier: Array(localUserID.utf8), localIdentityKey: localIdentityKey.rawRepresentation,
                    remoteIdentifier: Array(remoteUserID.utf8), remoteIdentityKey: remoteIdentityKey.rawRepresentation)
    }

    /// One party's `H[0..<32]`, from the cache when possible.
    func hash(identifier: [UInt8], identityKey: [UInt8]) -> [UInt8] {
        if let cached = cache?.hash(identityKey: identityKey, identifier: identifier) { return cached }
        let computed = FingerprintHash.compute(iterations: iterations, identifier: identifier, key: identityKey)
        cache?.store(computed, identityKey: identityKey, identifier: identifier)
        return computed
    }

    /// The number of per-party hashes currently cached (0 without a cache).
    var cachedCount: Int { cache?.count ?? 0 }
}
