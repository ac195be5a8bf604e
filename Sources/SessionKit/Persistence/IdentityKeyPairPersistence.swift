import SignalPrimitives

/// The persisted form of an `IdentityKeyPair`, in the common envelope of `StateWriter`
/// (`"SKST" || kind 0x05 (identity) || version || body || checksum`), version 1.
///
/// Body, version 1:
///
///     seed    32    the Ed25519 private key (the public key is recomputed)
///
/// Loading is strict: a truncated or trailing field or a bad checksum is
/// `SessionError.invalidPayload`, an unknown version `SessionError.unsupportedVersion`. The
/// blob is the identity's private key: protect it at rest and wipe copies (`SecureMemory.zero`).
extension IdentityKeyPair {
    /// The persisted-state version this library writes.
    @_spi(Testing) public static let persistenceVersion: UInt8 = 1

    /// The identity key pair as a blob (see the layout above).
    public func serialized() -> [UInt8] {
        var writer = StateWriter(kind: .identity, version: Self.persistenceVersion)
        privateKey.withUnsafeSeedBytes { writer.writeFixed(SecureBytes(copying: $0)) }
        return writer.finish()
    }

    /// Loads an identity key pair from `serialized()`'s blob.
    /// - Throws: `SessionError.invalidPayload` for a malformed blob,
    ///   `SessionError.unsupportedVersion` for an unknown version.
    public init(serialized blob: [UInt8]) throws(SessionError) {
        var reader = try StateReader(blob, kind: .identity, supportedVersions: 1 ... Self.persistenceVersion)
        let seed = try reader.readSecret(Ed25519.keyByteCount)
        try reader.finish()
        do { self.init(privateKey: try Ed25519.PrivateKey(seedStorage: seed)) } catch { throw .invalidPayload }
    }
}
