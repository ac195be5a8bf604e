import SignalPrimitives

/// The persisted form of `LocalPreKeys`, in the common envelope of `StateWriter`
/// (`"SKST" || kind 0x04 (preKeys) || version || body || checksum`), version 3. Version 2 held
/// the EK_A replay records themselves inside each entry; version 3 holds only their number, the
/// records being the store's (`BaseKeyRecord`), so the blob no longer grows with them.
/// `init(serialized:)` loads version 3 only (version 1 and 2 are `unsupportedVersion`);
/// `upgrading(serialized:)` also loads version 2 and hands its records out, for the store to
/// keep (SessionKitSQLite does it when it migrates a file to schema 5).
///
/// Body, version 3 (integers big-endian; a timestamp is an i64 in two's complement):
///
///     nextSignedPreKeyID     u32     ≠ 0
///     nextOneTimePreKeyID    u32     ≠ 0
///     nextKEMPreKeyID        u32     ≠ 0
///     current entry          (below)
///     previousCount          u32
///     previousCount × (entry || retiredAt i64), most recently retired first
///     oneTimeCount           u32     ≤ LocalPreKeys.maximumOneTimePreKeyCount
///     oneTimeCount × (id u32 (≠ 0) || private key 32), oldest first
///     oneTimeKEMCount        u32     ≤ LocalPreKeys.maximumOneTimePreKeyCount
///     oneTimeKEMCount × KEM key, oldest first
///
///     entry   = id u32 (≠ 0) || private key 32 || signature 64 || kem u8 (0 or 1) || createdAt i64
///               || [KEM key: the last-resort one, exactly when kem = 1]
///               || recordedCount u32 (the EK_A replay records held under it)
///     KEM key = id u32 (≠ 0) || seed 64 || ek 1184 (well-formed) || signature 64
///
/// Signed prekey ids are distinct, one-time prekey ids are distinct, and KEM prekey ids (one-time
/// and last resort together) are distinct. X25519 public keys are recomputed from the private
/// keys; an `ek` is stored (recomputing it would need a KEM) but its agreement with the seed is
/// not re-checked, nor are signatures (the blob does not hold the identity key). Version 2's
/// entry ended with `recordedCount u32 || recordedCount × EK_A 32` (canonical, in strictly
/// ascending byte order) instead. Loading is
/// strict: any violation above, a truncated or trailing field or a bad checksum is
/// `SessionError.invalidPayload`, an unknown version `SessionError.unsupportedVersion`. The blob
/// holds private keys: protect it at rest and wipe copies (`SecureMemory.zero`).
extension LocalPreKeys {
    /// The persisted-state version this library writes.
    @_spi(Testing) public static let persistenceVersion: UInt8 = 3
    /// The version that held the EK_A replay records inside the blob (`upgrading(serialized:)`).
    static let recordsInsideVersion: UInt8 = 2

    /// The prekeys as a blob (see the layout above).
    public func serialized() -> [UInt8] {
        var writer = StateWriter(kind: .preKeys, version: Self.persistenceVersion)
        writer.write(nextSignedPreKeyID)
        writer.write(nextOneTimePreKeyID)
        writer.write(nextKEMPreKeyID)
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
        writer.write(UInt32(truncatingIfNeeded: oneTimeKEMPreKeys.count))
        for key in oneTimeKEMPreKeys { Self.write(key, into: &writer) }
        return writer.finish()
    }

    /// Loads prekeys from `serialized()`'s blob (version 3).
    /// - Throws: `SessionError.invalidPayload` for a malformed or inconsistent blob,
    ///   `SessionError.unsupportedVersion` for another version (a version-2 blob, written
    ///   before the replay records left it, loads with `upgrading(serialized:)`).
    public init(serialized blob: [UInt8]) throws(SessionError) {
        var records: [BaseKeyRecord] = []
        try self.init(blob, versions: Self.persistenceVersion ... Self.persistenceVersion, records: &records)
    }

    /// Loads prekeys from a blob of version 3 or of version 2, the version that held the EK_A
    /// replay records inside, and returns them with the records the blob held (none for
    /// version 3). A store that persisted version-2 blobs keeps the records its own way
    /// (`PreKeyStore.hasRecordedBaseKey(_:signedPreKeyID:)`) and stores `serialized()` in place
    /// of the old blob, in one write; the prekeys count the records under each signed prekey.
    /// - Throws: as `init(serialized:)`; version 1 is `unsupportedVersion`.
    public static func upgrading(serialized blob: [UInt8]) throws(SessionError) -> (preKeys: LocalPreKeys, baseKeyRecords: [BaseKeyRecord]) {
        var records: [BaseKeyRecord] = []
        let keys = try LocalPreKeys(blob, versions: recordsInsideVersion ... persistenceVersion, records: &records)
        return (keys, records)
    }

    /// Loads a blob of one of `versions`, appending a version-2 blob's records to `records`.
    private init(_ blob: [UInt8], versions: ClosedRange<UInt8>, records: inout [BaseKeyRecord]) throws(SessionError) {
        var reader = try StateReader(blob, kind: .preKeys, supportedVersions: versions)
        let nextSigned = try reader.readUInt32()
        let nextOneTime = try reader.readUInt32()
        let nextKEM = try reader.readUInt32()
        guard nextSigned != 0, nextOneTime != 0, nextKEM != 0 else { throw .invalidPayload }
        var kemIDs = Set<UInt32>()
        let current = try Self.readEntry(&reader, retired: false, kemIDs: &kemIDs, records: &records)
        var signedIDs: Set<UInt32> = [current.key.id]
        let previousCount = try reader.readUInt32()
        var previous: [SignedPreKeyEntry] = []
        for _ in 0 ..< previousCount {
            let entry = try Self.readEntry(&reader, retired: true, kemIDs: &kemIDs, records: &records)
            guard signedIDs.insert(entry.key.id).inserted else { throw .invalidPayload }
            previous.append(entry)
        }
        let oneTimeCount = try Self.readCount(&reader)
        var oneTime: [OneTimePreKey] = []
        var oneTimeIDs = Set<UInt32>()
        for _ in 0 ..< oneTimeCount {
            let id = try reader.readUInt32()
            guard id != 0, oneTimeIDs.insert(id).inserted else { throw .invalidPayload }
            let secret = try reader.readSecret(X25519.keyByteCount)
            do { oneTime.append(OneTimePreKey(id: id, privateKey: try X25519.PrivateKey(bytes: secret))) } catch { throw .invalidPayload }
        }
        let oneTimeKEMCount = try Self.readCount(&reader)
        var oneTimeKEM: [KEMPreKey] = []
        for _ in 0 ..< oneTimeKEMCount { oneTimeKEM.append(try Self.readKEMKey(&reader, kind: .oneTime, ids: &kemIDs)) }
        try reader.finish()
        self.init(
            currentSignedPreKey: current, previousSignedPreKeys: previous, oneTimePreKeys: oneTime,
            oneTimeKEMPreKeys: oneTimeKEM, nextSignedPreKeyID: nextSigned, nextOneTimePreKeyID: nextOneTime,
            nextKEMPreKeyID: nextKEM)
    }

    private static func write(_ entry: SignedPreKeyEntry, into writer: inout StateWriter) {
        writer.write(entry.key.id)
        entry.key.privateKey.withUnsafeBytes { writer.writeFixed(SecureBytes(copying: $0)) }
        writer.writeFixed(entry.key.signature)
        writer.write(UInt8(entry.key.signsKEMPreKeys ? 1 : 0))
        writer.write(UInt64(bitPattern: entry.createdAt.secondsSince1970))
        if let key = entry.lastResortKEMPreKey { write(key, into: &writer) }
        writer.write(UInt32(clamping: entry.recordedBaseKeyCount))
    }

    private static func write(_ key: KEMPreKey, into writer: inout StateWriter) {
        writer.write(key.id)
        writer.writeFixed(key.seed)
        writer.writeFixed(key.publicKey.rawRepresentation)
        writer.writeFixed(key.signature)
    }

    /// An entry; for version 2, its records are appended to `records` and counted.
    private static func readEntry(
        _ reader: inout StateReader, retired: Bool, kemIDs: inout Set<UInt32>, records: inout [BaseKeyRecord]
    ) throws(SessionError) -> SignedPreKeyEntry {
        let id = try reader.readUInt32()
        guard id != 0 else { throw .invalidPayload }
        let secret = try reader.readSecret(X25519.keyByteCount)
        let signature = try reader.readFixed(Ed25519.signatureByteCount)
        let kemByte = try reader.readByte()
        guard kemByte <= 1 else { throw .invalidPayload }
        let created = Timestamp(secondsSince1970: Int64(bitPattern: try reader.readUInt64()))
        let lastResort = kemByte == 1 ? try readKEMKey(&reader, kind: .lastResort, ids: &kemIDs) : nil
        let recordedCount = try reader.readUInt32()
        if reader.version == recordsInsideVersion {
            var previousRecord: [UInt8]?
            for _ in 0 ..< recordedCount {
                let bytes = try reader.readFixed(X25519.keyByteCount)
                // Strictly ascending, as version 2 wrote them: the format stays canonical.
                guard previousRecord.map({ $0.lexicographicallyPrecedes(bytes) }) ?? true else { throw .invalidPayload }
                previousRecord = bytes
                do { records.append(BaseKeyRecord(signedPreKeyID: id, baseKey: try X25519.PublicKey(canonicalRepresentation: bytes))) } catch {
                    throw .invalidPayload
                }
            }
        }
        guard let count = Int(exactly: recordedCount) else { throw .invalidPayload }
        let privateKey: X25519.PrivateKey
        do { privateKey = try X25519.PrivateKey(bytes: secret) } catch { throw .invalidPayload }
        let key = SignedPreKey(id: id, privateKey: privateKey, signature: signature, signsKEMPreKeys: kemByte == 1)
        let retiredAt = retired ? Timestamp(secondsSince1970: Int64(bitPattern: try reader.readUInt64())) : nil
        return SignedPreKeyEntry(validKey: key, lastResortKEMPreKey: lastResort, createdAt: created, retiredAt: retiredAt,
                                 recordedBaseKeyCount: count)
    }

    private static func readKEMKey(
        _ reader: inout StateReader, kind: KEMPreKey.Kind, ids: inout Set<UInt32>
    ) throws(SessionError) -> KEMPreKey {
        let id = try reader.readUInt32()
        guard id != 0, ids.insert(id).inserted else { throw .invalidPayload }
        let seed = try reader.readSecret(KEMSeed.byteCount)
        let publicKey: KEMEncapsulationKey
        do { publicKey = try KEMEncapsulationKey(rawRepresentation: try reader.readFixed(KEMEncapsulationKey.byteCount)) } catch {
            throw .invalidPayload
        }
        let signature = try reader.readFixed(Ed25519.signatureByteCount)
        do { return try KEMPreKey(id: id, kind: kind, seed: seed, publicKey: publicKey, signature: signature) } catch {
            throw .invalidPayload
        }
    }

    private static func readCount(_ reader: inout StateReader) throws(SessionError) -> UInt32 {
        let count = try reader.readUInt32()
        guard count <= UInt32(maximumOneTimePreKeyCount) else { throw .invalidPayload }
        return count
    }
}
