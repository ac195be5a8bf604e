import SignalPrimitives

/// The persisted form of `LocalPreKeys`, in the common envelope of `StateWriter`
/// (`"SKST" || kind 0x04 (preKeys) || version || body || checksum`), version 1.
///
/// Body, version 1 (integers big-endian; a timestamp is an i64 in two's complement):
///
///     nextSignedPreKeyID     u32     ≠ 0
///     nextOneTimePreKeyID    u32     ≠ 0
///     current signed prekey: id u32 (≠ 0) || private key 32 || signature 64 || createdAt i64
///     previousCount          u32
///     previousCount × (id u32 (≠ 0) || private key 32 || signature 64 || createdAt i64
///                      || retiredAt i64), most recently retired first
///     oneTimeCount           u32     ≤ LocalPreKeys.maximumOneTimePreKeyCount
///     oneTimeCount × (id u32 (≠ 0) || private key 32), oldest first
///
/// Signed prekey ids are distinct, and one-time prekey ids are distinct. Public keys are
/// recomputed from the private keys; signatures are not re-verified (the blob does not hold
/// the identity key). Loading is strict: any violation above, a truncated or trailing field or
/// a bad checksum is `SessionError.invalidPayload`, an unknown version
/// `SessionError.unsupportedVersion`. The blob holds private keys: protect it at rest and wipe
/// copies (`SecureMemory.zero`).
extension LocalPreKeys {
    /// The persisted-state version this library writes.
    public static let persistenceVersion: UInt8 = 1

    /// The prekeys as a blob (see the layout above).
    public func serialized() -> [UInt8] {
        var writer = StateWriter(kind: .preKeys, version: Self.persistenceVersion)
        writer.write(nextSignedPreKeyID)
        writer.write(nextOneTimePreKeyID)
        Self.write(currentSignedPreKey, into: &writer)
        writer.write(UInt32(truncatingIfNeeded: previousSignedPreKeys.count))
        for entry in previousSignedPreKeys {
            Self.write(entry, into: &writer)
            writer.write(UInt64(bitPattern: (entry.retiredAt ?? entry.createdAt).secondsSince1970))
        }
        writer.write(UInt32(truncatingIfNeeded: oneTimePreKeys.count))
        for key in oneTimePreKeys {
            writer.write(key.id)
            key.privateKey.withUnsafeBytes { writer.writeFixed(SecureBytes(copying: $0)) }
        }
        return writer.finish()
    }

    /// Loads prekeys from `serialized()`'s blob.
    /// - Throws: `SessionError.invalidPayload` for a malformed or inconsistent blob,
    ///   `SessionError.unsupportedVersion` for an unknown version.
    public init(serialized blob: [UInt8]) throws(SessionError) {
        var reader = try StateReader(blob, kind: .preKeys, supportedVersions: 1 ... Self.persistenceVersion)
        let nextSigned = try reader.readUInt32()
        let nextOneTime = try reader.readUInt32()
        guard nextSigned != 0, nextOneTime != 0 else { throw .invalidPayload }
        let (currentKey, currentCreated) = try Self.readSignedPreKey(&reader)
        var signedIDs: Set<UInt32> = [currentKey.id]
        let previousCount = try reader.readUInt32()
        var previous: [SignedPreKeyEntry] = []
        for _ in 0 ..< previousCount {
            let (key, created) = try Self.readSignedPreKey(&reader)
            let retired = Timestamp(secondsSince1970: Int64(bitPattern: try reader.readUInt64()))
            guard signedIDs.insert(key.id).inserted else { throw .invalidPayload }
            previous.append(SignedPreKeyEntry(key: key, createdAt: created, retiredAt: retired))
        }
        let oneTimeCount = try reader.readUInt32()
        guard oneTimeCount <= UInt32(Self.maximumOneTimePreKeyCount) else { throw .invalidPayload }
        var oneTime: [OneTimePreKey] = []
        var oneTimeIDs = Set<UInt32>()
        for _ in 0 ..< oneTimeCount {
            let id = try reader.readUInt32()
            guard id != 0, oneTimeIDs.insert(id).inserted else { throw .invalidPayload }
            let secret = try reader.readSecret(X25519.keyByteCount)
            do { oneTime.append(OneTimePreKey(id: id, privateKey: try X25519.PrivateKey(bytes: secret))) } catch { throw .invalidPayload }
        }
        try reader.finish()
        self.init(
            currentSignedPreKey: SignedPreKeyEntry(key: currentKey, createdAt: currentCreated, retiredAt: nil),
            previousSignedPreKeys: previous, oneTimePreKeys: oneTime, nextSignedPreKeyID: nextSigned,
            nextOneTimePreKeyID: nextOneTime)
    }

    private static func write(_ entry: SignedPreKeyEntry, into writer: inout StateWriter) {
        writer.write(entry.key.id)
        entry.key.privateKey.withUnsafeBytes { writer.writeFixed(SecureBytes(copying: $0)) }
        writer.writeFixed(entry.key.signature)
        writer.write(UInt64(bitPattern: entry.createdAt.secondsSince1970))
    }

    private static func readSignedPreKey(_ reader: inout StateReader) throws(SessionError) -> (SignedPreKey, Timestamp) {
        let id = try reader.readUInt32()
        guard id != 0 else { throw .invalidPayload }
        let secret = try reader.readSecret(X25519.keyByteCount)
        let signature = try reader.readFixed(Ed25519.signatureByteCount)
        let created = Timestamp(secondsSince1970: Int64(bitPattern: try reader.readUInt64()))
        do {
            return (SignedPreKey(id: id, privateKey: try X25519.PrivateKey(bytes: secret), signature: signature), created)
        } catch {
            throw .invalidPayload
        }
    }
}

extension SignedPreKey {
    /// Assembles a signed prekey from a loaded private key and a 64-byte signature.
    init(id: UInt32, privateKey: X25519.PrivateKey, signature: [UInt8]) {
        self.id = id
        self.privateKey = privateKey
        self.signature = signature
    }
}

extension OneTimePreKey {
    /// Assembles a one-time prekey from a loaded private key.
    init(id: UInt32, privateKey: X25519.PrivateKey) {
        self.id = id
        self.privateKey = privateKey
    }
}
