/// A session as SessionKit persists it: the ratchet plus the X3DH context around it.
struct ReferenceSessionRecord<B: ReferenceBackend> {
    /// 1: initiator, 2: responder.
    var role: UInt8
    var localIdentityKey: [UInt8]
    var remoteIdentityKey: [UInt8]
    /// The prekey prefix: IK_A, EK_A, spk_id and the optional opk_id.
    var prefixIdentityKey: [UInt8]
    var prefixBaseKey: [UInt8]
    var signedPreKeyID: UInt32
    var oneTimePreKeyID: UInt32?
    var sendsPreKeyMessages: Bool
    var ratchet: ReferenceRatchet<B>
}

/// Session save and load, naively, in exactly the layout of SessionKit's persisted session
/// (version 1, see `SessionStatePersistence.swift`): `"SKST" || 0x01 || 0x01 || body ||
/// SHA-256(…)[0..<16]`, the DHs public key recomputed on load. Fields are appended one by
/// one to an array and parsed back strictly.
enum ReferenceSessionCodec<B: ReferenceBackend> {
    /// The serialized session.
    static func save(_ record: ReferenceSessionRecord<B>) -> [UInt8] {
        let session = record.ratchet
        var bytes: [UInt8] = [0x53, 0x4b, 0x53, 0x54, 0x01, 0x01]  // "SKST", session, version 1
        bytes.append(record.role)
        bytes.appendU32(UInt32(session.maxSkip))
        bytes.appendU32(UInt32(session.maxStored))
        bytes += record.localIdentityKey
        bytes += record.remoteIdentityKey
        bytes += record.prefixIdentityKey
        bytes += record.prefixBaseKey
        bytes.appendU32(record.signedPreKeyID)
        if let id = record.oneTimePreKeyID {
            bytes.append(1)
            bytes.appendU32(id)
        } else {
            bytes.append(0)
        }
        bytes.append(record.sendsPreKeyMessages ? 1 : 0)
        bytes += session.rootKey
        bytes += B.secretBytes(of: session.sendingKey)
        appendOptional(session.sendingChain, to: &bytes)
        bytes.appendU64(session.sendCounter)
        bytes.appendU64(session.previousCounter)
        appendOptional(session.remoteKey, to: &bytes)
        if let chain = session.receivingChain {
            bytes.append(1)
            bytes += chain
            bytes.appendU64(session.receiveCounter)
        } else {
            bytes.append(0)
        }
        bytes.appendU32(UInt32(session.skippedOrder.count))
        for position in session.skippedOrder {
            bytes += position.ratchetKey
            bytes.appendU32(position.counter)
            bytes += session.skipped[position] ?? ReferenceConstants.zero32
        }
        var checksum = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { input in checksum.withUnsafeMutableBytes { B.sha256(input, into: $0) } }
        return bytes + checksum[0..<16]
    }

    private static func appendOptional(_ value: [UInt8]?, to bytes: inout [UInt8]) {
        if let value {
            bytes.append(1)
            bytes += value
        } else {
            bytes.append(0)
        }
    }

    /// The session in `bytes`, or `invalidPayload` / `unsupportedVersion`.
    static func load(
        _ bytes: [UInt8], keySource: @escaping () throws -> (key: B.AgreementKey, publicKey: [UInt8])
    ) throws -> ReferenceSessionRecord<B> {
        guard bytes.count >= 6 + 16, bytes[0] == 0x53, bytes[1] == 0x4b, bytes[2] == 0x53, bytes[3] == 0x54,
              bytes[4] == 0x01
        else { throw ReferenceError.invalidPayload }
        guard bytes[5] == 0x01 else { throw ReferenceError.unsupportedVersion }
        var checksum = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { all in
            checksum.withUnsafeMutableBytes {
                B.sha256(UnsafeRawBufferPointer(rebasing: all[0..<(bytes.count - 16)]), into: $0)
            }
        }
        guard checksum[0..<16].elementsEqual(bytes[(bytes.count - 16)...]) else { throw ReferenceError.invalidPayload }
        let counterLimit = UInt64(UInt32.max) + 1
        var reader = Reader(bytes: bytes, offset: 6, end: bytes.count - 16)
        let role = try reader.byte()
        guard role == 1 || role == 2 else { throw ReferenceError.invalidPayload }
        let maxSkip = Int(try reader.u32())
        let maxStored = Int(try reader.u32())
        guard maxSkip <= maxStored else { throw ReferenceError.invalidPayload }
        let localIdentityKey = try reader.take(32)
        let remoteIdentityKey = try reader.take(32)
        let prefixIdentityKey = try reader.take(32)
        guard prefixIdentityKey == (role == 1 ? localIdentityKey : remoteIdentityKey) else {
            throw ReferenceError.invalidPayload
        }
        let prefixBaseKey = try reader.x25519Key()
        let signedPreKeyID = try reader.u32()
        let oneTimePreKeyID: UInt32? = try reader.flag() ? try reader.u32() : nil
        let sendsPreKeyMessages = try reader.flag()
        guard role == 1 || !sendsPreKeyMessages else { throw ReferenceError.invalidPayload }
        let rootKey = try reader.take(32)
        let secret = try reader.take(32)
        let sendingChain: [UInt8]? = try reader.flag() ? try reader.take(32) : nil
        let sendCounter = try reader.u64()
        let previousCounter = try reader.u64()
        guard sendCounter <= counterLimit, previousCounter <= counterLimit else { throw ReferenceError.invalidPayload }
        let remoteKey: [UInt8]? = try reader.flag() ? try reader.x25519Key() : nil
        var receivingChain: [UInt8]?
        var receiveCounter: UInt64 = 0
        if try reader.flag() {
            guard remoteKey != nil else { throw ReferenceError.invalidPayload }
            receivingChain = try reader.take(32)
            receiveCounter = try reader.u64()
            guard receiveCounter <= counterLimit else { throw ReferenceError.invalidPayload }
        }
        let skippedCount = Int(try reader.u32())
        guard skippedCount <= maxStored else { throw ReferenceError.invalidPayload }
        // The DHs public key is not stored: X25519(secret, 9) again.
        let sendingKey = try B.agreementKey(secret: secret)
        var session = ReferenceRatchet<B>(
            associatedData: role == 1 ? localIdentityKey + remoteIdentityKey : remoteIdentityKey + localIdentityKey,
            rootKey: rootKey, sendingKey: sendingKey.key, sendingPublicKey: sendingKey.publicKey,
            remoteKey: remoteKey, keySource: keySource,
            scratch: ScratchBuffer(count: 512), paddedScratch: ScratchBuffer(count: 1024))
        session.sendingChain = sendingChain
        session.receivingChain = receivingChain
        session.sendCounter = sendCounter
        session.receiveCounter = receiveCounter
        session.previousCounter = previousCounter
        session.maxSkip = maxSkip
        session.maxStored = maxStored
        session.skipped.reserveCapacity(skippedCount)
        session.skippedOrder.reserveCapacity(skippedCount)
        for _ in 0..<skippedCount {
            let position = ReferenceRatchet<B>.SkippedPosition(ratchetKey: try reader.x25519Key(), counter: try reader.u32())
            guard session.skipped[position] == nil else { throw ReferenceError.invalidPayload }
            session.skipped[position] = try reader.take(32)
            session.skippedOrder.append(position)
        }
        guard reader.offset == reader.end else { throw ReferenceError.invalidPayload }
        return ReferenceSessionRecord(
            role: role, localIdentityKey: localIdentityKey, remoteIdentityKey: remoteIdentityKey,
            prefixIdentityKey: prefixIdentityKey, prefixBaseKey: prefixBaseKey, signedPreKeyID: signedPreKeyID,
            oneTimePreKeyID: oneTimePreKeyID, sendsPreKeyMessages: sendsPreKeyMessages, ratchet: session)
    }

    /// A strict cursor over the body.
    struct Reader {
        let bytes: [UInt8]
        var offset: Int
        let end: Int

        mutating func take(_ count: Int) throws -> [UInt8] {
            guard count >= 0, end - offset >= count else { throw ReferenceError.invalidPayload }
            defer { offset += count }
            return Array(bytes[offset..<(offset + count)])
        }

        mutating func byte() throws -> UInt8 {
            guard end - offset >= 1 else { throw ReferenceError.invalidPayload }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func flag() throws -> Bool {
            switch try byte() {
            case 0: return false
            case 1: return true
            default: throw ReferenceError.invalidPayload
            }
        }

        mutating func u32() throws -> UInt32 {
            guard end - offset >= 4 else { throw ReferenceError.invalidPayload }
            defer { offset += 4 }
            return bytes.u32(at: offset)
        }

        mutating func u64() throws -> UInt64 {
            let high = try u32(), low = try u32()
            return UInt64(high) << 32 | UInt64(low)
        }

        mutating func x25519Key() throws -> [UInt8] {
            let key = try take(32)
            guard key.withUnsafeBytes(isCanonicalX25519) else { throw ReferenceError.invalidPayload }
            return key
        }
    }
}
