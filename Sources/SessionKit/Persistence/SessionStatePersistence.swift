import SignalPrimitives

/// The persisted form of a `SessionState`, in the common envelope of `StateWriter`
/// (`"SKST" || kind 0x01 (session) || version || body || checksum`), version 5; versions 2,
/// 3 and 4 are still read (version 1, SPEC version 1's sessions, is `unsupportedVersion`).
///
/// Body, version 5 (integers big-endian; `bool` is one byte 0x00 or 0x01; an address is
/// `Encode(address)` of SPEC §1, a UTF-8 user id of 1–255 bytes and a u32 device id):
///
///     role                 u8      0x01 initiator, 0x02 responder
///     generation           u64     how many messages the session encrypted or decrypted
///     maxSkip              u32     MAX_SKIP
///     maxStored            u32     MAX_STORED (maxSkip ≤ maxStored)
///     localIdentityKey     32      our Ed25519 public key
///     remoteIdentityKey    32      the peer's Ed25519 public key
///     localAddress         address
///     remoteAddress        address
///     EK_A                 32      canonical X25519 key
///     SHA-256(P)           32      the digest of the creating prefix
///     hasPendingPrefix     bool    [u32(len) || P]: an initiator's prefix until its first
///                                  reply; never for a responder; P's IK_A is the local
///                                  identity key, its EK_A the one above, its digest the one above
///     RK                   32
///     DHs private key      32      (the public key is recomputed)
///     hasCKs               bool    [CKs 32]
///     Ns                   u64     ≤ 2^32
///     PN                   u64     ≤ 2^32
///     hasDHr               bool    [DHr 32, canonical]
///     hasCKr               bool    [CKr 32 || Nr u64 ≤ 2^32]; requires DHr
///     skippedCount         u32     ≤ maxStored
///     skippedCount × (ratchet key 32 (canonical) || n u32 || mk 32), oldest first, no
///                                  (ratchet key, n) twice
///     isPostQuantum        bool    created by a hybrid X3DH (a KEM part); must equal whether
///                                  the pending prefix, when there is one, has a KEM part
///     remoteRegistrationID u32     the peer's registration id (SPEC §9), 1 … 2^31 − 1, or 0
///                                  for none
///     isArchived           bool    archived by a retry notice (SPEC §9)
///     skippedCount × u64           when each skipped key was stored (seconds since 1970, in
///                                  the order of the keys above; 0: unknown)
///
/// Version 4 is the same body without the keys' times (they load as unknown: stamped when the
/// session is next used). Version 3 is version 4 without the last two fields: such a session loads without a
/// registration id and not archived. Version 2 is version 3 without `isPostQuantum`: such a
/// session loads as classic, except an initiator whose pending prefix has a KEM part
/// (post-quantum, evidently). All are written back as version 5.
///
/// AD is not stored: it is IK_A || IK_B || Encode(A) || Encode(B) from the identity keys, the
/// addresses and the role. Loading is strict: any violation above, a truncated or trailing
/// field or a bad checksum is `SessionError.invalidPayload`, an unknown version
/// `SessionError.unsupportedVersion`. The blob holds secrets: protect it at rest and wipe
/// copies (`SecureMemory.zero`).
extension SessionState {
    /// The persisted-state version this library writes (5: with the peer's registration id,
    /// the archived mark and the skipped keys' times).
    public static let persistenceVersion: UInt8 = 5
    /// The oldest persisted-state version this library reads (2: without `isPostQuantum`).
    @_spi(Storage) @_spi(Testing) public static let oldestReadableVersion: UInt8 = 2

    /// The session as a blob (see the layout above).
    public func serialized() -> [UInt8] {
        var writer = StateWriter(kind: .session, version: Self.persistenceVersion,
                                 capacity: StateWriter.envelopeByteCount + persistedBodyByteCountEstimate)
        encode(into: &writer)
        return writer.finish()
    }

    /// Loads a session from `serialized()`'s blob.
    /// - Throws: `SessionError.invalidPayload` for a malformed or inconsistent blob,
    ///   `SessionError.unsupportedVersion` for an unknown version.
    public init(serialized blob: [UInt8]) throws(SessionError) {
        var reader = try StateReader(blob, kind: .session, supportedVersions: Self.oldestReadableVersion ... Self.persistenceVersion)
        try self.init(decodingFrom: &reader)
        try reader.finish()
    }

    /// An upper bound on the size of the version-4 body `encode(into:)` writes: every
    /// optional field present, plus 68 bytes per skipped message key. Only a capacity hint.
    var persistedBodyByteCountEstimate: Int {
        // role, generation, maxSkip, maxStored; 2 identity keys; 2 addresses; EK_A; digest; pending prefix;
        // RK; DHs; hasCKs + CKs; Ns; PN; hasDHr + DHr; hasCKr + CKr + Nr; skippedCount; isPostQuantum;
        // remoteRegistrationID; isArchived.
        let prefix = pendingPreKeyPrefix.map { 4 + $0.byteCount } ?? 0
        let fixed = 1 + 8 + 4 + 4 + 2 * 32 + localAddress.encoded.count + remoteAddress.encoded.count + 32 + 32 + 1 + prefix
            + 32 + 32 + 33 + 8 + 8 + 33 + 41 + 4 + 1 + 4 + 1
        return fixed + ratchet.skippedKeys.count * (32 + 4 + 32)
    }

    /// Writes the version-4 body (for records that embed sessions in their own blob).
    @_spi(Testing) public func encode(into writer: inout StateWriter) {
        writer.write(role.rawValue)
        writer.write(generation)
        writer.write(UInt32(truncatingIfNeeded: configuration.maxSkip))
        writer.write(UInt32(truncatingIfNeeded: configuration.maxStored))
        writer.writeFixed(localIdentityKey.rawRepresentation)
        writer.writeFixed(remoteIdentityKey.rawRepresentation)
        writer.writeFixed(localAddress.encoded)
        writer.writeFixed(remoteAddress.encoded)
        writer.writeFixed(baseKey.rawRepresentation)
        writer.writeFixed(preKeyPrefixDigest)
        writer.write(pendingPreKeyPrefix != nil)
        if let prefix = pendingPreKeyPrefix { writer.writeVariable(prefix.bytes) }
        writer.writeFixed(ratchet.rootKey.storage)
        ratchet.sendingRatchetKey.withUnsafeBytes { writer.writeFixed(SecureBytes(copying: $0)) }
        writer.write(ratchet.sendingChain != nil)
        if let chain = ratchet.sendingChain { writer.writeFixed(chain.storage) }
        writer.write(ratchet.sendCounter)
        writer.write(ratchet.previousSendCounter)
        writer.write(ratchet.remoteRatchetKey != nil)
        if let key = ratchet.remoteRatchetKey { writer.writeFixed(key.rawRepresentation) }
        writer.write(ratchet.receivingChain != nil)
        if let chain = ratchet.receivingChain {
            writer.writeFixed(chain.chainKey.storage)
            writer.write(chain.counter)
        }
        let skipped = ratchet.skippedKeys.inAgeOrder
        writer.write(UInt32(truncatingIfNeeded: skipped.count))
        for (slot, key) in skipped {
            writer.writeFixed(slot.ratchetKey.rawRepresentation)
            writer.write(slot.counter)
            writer.writeFixed(key.storage)
        }
        writer.write(isPostQuantum)
        writer.write(remoteRegistrationID?.rawValue ?? 0)
        writer.write(isArchived)
        // Version 5: when each skipped key was stored, in the order above (0: unknown).
        for time in ratchet.skippedKeys.storedTimesInAgeOrder { writer.write(UInt64(max(time, 0))) }
    }

    /// Reads a body of the reader's version (5; 4 without the skipped keys' times; 3 also without the
    /// registration id and the archived mark; 2 also without `isPostQuantum`) written by `encode(into:)`, strictly.
    /// - Throws: `SessionError.invalidPayload` for a malformed or inconsistent body,
    ///   `SessionError.unsupportedVersion` when the reader's version is not 2 … 5.
    @_spi(Testing) public init(decodingFrom reader: inout StateReader) throws(SessionError) {
        guard (Self.oldestReadableVersion ... Self.persistenceVersion).contains(reader.version) else { throw .unsupportedVersion }
        let counterLimit = UInt64(UInt32.max) + 1
        guard let role = Role(rawValue: try reader.readByte()) else { throw .invalidPayload }
        let generation = try reader.readUInt64()
        // Compared as u32 before any conversion, so no stored value can trap where Int has 32 bits.
        let storedLimit = UInt32(ProtocolLimits.maximumMaxStored)
        let rawMaxSkip = try reader.readUInt32()
        let rawMaxStored = try reader.readUInt32()
        guard rawMaxSkip <= storedLimit, rawMaxStored <= storedLimit else { throw .invalidPayload }
        let maxSkip = Int(rawMaxSkip)
        let maxStored = Int(rawMaxStored)
        let configuration: SessionConfiguration
        do { configuration = try SessionConfiguration(maxSkip: maxSkip, maxStored: maxStored) } catch { throw .invalidPayload }
        let localIdentityKey = try Self.readEd25519Key(&reader)
        let remoteIdentityKey = try Self.readEd25519Key(&reader)
        let localAddress = try reader.readAddress()
        let remoteAddress = try reader.readAddress()
        let baseKey = try Self.readX25519Key(&reader)
        let digest = try reader.readFixed(SHA256.byteCount)
        var pendingPrefix: PreKeyMessage.Prefix?
        if try reader.readBool() {
            guard role == .initiator else { throw .invalidPayload }
            let bytes = try reader.readVariable(maximum: PreKeyMessage.maximumPrefixByteCount)
            let prefix = try PreKeyMessage.Prefix(decoding: bytes)
            guard prefix.identityKey == localIdentityKey, prefix.baseKey == baseKey, prefix.digest == digest else {
                throw .invalidPayload
            }
            pendingPrefix = prefix
        }
        let rootKey = RootKey(storage: try reader.readSecret(RootKey.byteCount))
        let sendingRatchetKey: X25519.PrivateKey
        do { sendingRatchetKey = try X25519.PrivateKey(bytes: try reader.readSecret(X25519.keyByteCount)) } catch { throw .invalidPayload }
        let sendingChain: ChainKey? = try reader.readBool() ? ChainKey(storage: try reader.readSecret(ChainKey.byteCount)) : nil
        let sendCounter = try reader.readUInt64()
        let previousSendCounter = try reader.readUInt64()
        guard sendCounter <= counterLimit, previousSendCounter <= counterLimit else { throw .invalidPayload }
        let remoteRatchetKey: X25519.PublicKey? = try reader.readBool() ? try Self.readX25519Key(&reader) : nil
        var receivingChain: ReceiverChain?
        if try reader.readBool() {
            guard remoteRatchetKey != nil else { throw .invalidPayload }
            let chainKey = ChainKey(storage: try reader.readSecret(ChainKey.byteCount))
            let counter = try reader.readUInt64()
            guard counter <= counterLimit else { throw .invalidPayload }
            receivingChain = ReceiverChain(chainKey: chainKey, counter: counter)
        }
        let rawSkippedCount = try reader.readUInt32()
        guard rawSkippedCount <= rawMaxStored else { throw .invalidPayload }
        let skippedCount = Int(rawSkippedCount)
        var skipped: [(slot: SkippedMessageKeys.Slot, messageKey: MessageKey)] = []
        // The count comes from the blob: reserve no more than the default bound, so that a
        // corrupt count cannot request gigabytes before the truncated body is noticed.
        skipped.reserveCapacity(min(skippedCount, ProtocolLimits.defaultMaxStored))
        var seen = Set<SkippedMessageKeys.Slot>()
        for _ in 0 ..< skippedCount {
            let ratchetKey = try Self.readX25519Key(&reader)
            let slot = SkippedMessageKeys.Slot(ratchetKey: ratchetKey, counter: try reader.readUInt32())
            guard seen.insert(slot).inserted else { throw .invalidPayload }
            skipped.append((slot, MessageKey(storage: try reader.readSecret(MessageKey.byteCount))))
        }
        let hybridPrefix = pendingPrefix.map { $0.kem != nil }
        let isPostQuantum: Bool
        if reader.version >= 3 {
            isPostQuantum = try reader.readBool()
            if let hybridPrefix, hybridPrefix != isPostQuantum { throw .invalidPayload }
        } else {
            isPostQuantum = hybridPrefix ?? false
        }
        var remoteRegistrationID: RegistrationID?
        var isArchived = false
        if reader.version >= 4 {
            let rawID = try reader.readUInt32()
            if rawID != 0 {
                guard let id = RegistrationID(rawValue: rawID) else { throw .invalidPayload }
                remoteRegistrationID = id
            }
            isArchived = try reader.readBool()
        }
        var storedAt: [Int64]?
        if reader.version >= 5 {
            var times: [Int64] = []
            times.reserveCapacity(skipped.count)
            for _ in 0 ..< skipped.count {
                let time = try reader.readUInt64()
                guard time <= UInt64(Int64.max) else { throw .invalidPayload }
                times.append(Int64(time))
            }
            storedAt = times
        }
        var skippedKeys = SkippedMessageKeys()
        skippedKeys.append(skipped, maxStored: maxStored, storedAt: storedAt)
        self.init(
            role: role, configuration: configuration, localIdentityKey: localIdentityKey,
            remoteIdentityKey: remoteIdentityKey, localAddress: localAddress, remoteAddress: remoteAddress,
            baseKey: baseKey, preKeyPrefixDigest: digest, pendingPreKeyPrefix: pendingPrefix,
            ratchet: DoubleRatchet(
                rootKey: rootKey, sendingRatchetKey: sendingRatchetKey, sendingChain: sendingChain,
                sendCounter: sendCounter, previousSendCounter: previousSendCounter, remoteRatchetKey: remoteRatchetKey,
                receivingChain: receivingChain, skippedKeys: skippedKeys),
            generation: generation, isPostQuantum: isPostQuantum, remoteRegistrationID: remoteRegistrationID,
            isArchived: isArchived)
    }

    private static func readEd25519Key(_ reader: inout StateReader) throws(SessionError) -> Ed25519.PublicKey {
        do { return try Ed25519.PublicKey(rawRepresentation: try reader.readFixed(Ed25519.keyByteCount)) } catch { throw .invalidPayload }
    }

    private static func readX25519Key(_ reader: inout StateReader) throws(SessionError) -> X25519.PublicKey {
        do { return try X25519.PublicKey(canonicalRepresentation: try reader.readFixed(X25519.keyByteCount)) } catch { throw .invalidPayload }
    }
}
