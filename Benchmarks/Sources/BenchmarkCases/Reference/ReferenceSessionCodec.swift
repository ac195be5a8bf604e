/// A session as SessionKit persists it: the ratchet plus the X3DH context around it (SPEC v2:
/// both addresses, EK_A, SHA-256(P) and, for an initiator without a reply, P itself).
struct ReferenceSessionRecord<B: ReferenceBackend> {
    /// 1: initiator, 2: responder.
    var role: UInt8
    /// How many messages the session encrypted or decrypted (persisted after the role).
    var generation: UInt64 = 0
    var localIdentityKey: [UInt8]
    var remoteIdentityKey: [UInt8]
    var localAddress: ReferenceAddress
    var remoteAddress: ReferenceAddress
    /// EK_A of the X3DH run that created the session.
    var baseKey: [UInt8]
    /// SHA-256(P) of the creating prefix.
    var prefixDigest: [UInt8]
    /// P, while an initiator has had no reply (its messages are then `0x22 || P || message`).
    var pendingPrefix: [UInt8]?
    var ratchet: ReferenceRatchet<B>
    /// Whether a hybrid X3DH (with a KEM part) created the session.
    var isPostQuantum = false
    /// The peer's registration id (SPEC §9), 0 for none.
    var remoteRegistrationID: UInt32 = 0
    /// Whether a retry notice archived the session (persisted last).
    var isArchived = false

    /// Encrypts with the ratchet; a prekey message while `pendingPrefix` is set.
    mutating func encrypt(_ plaintext: [UInt8]) throws -> [UInt8] {
        let body = try ratchet.encrypt(plaintext)
        generation += 1
        guard let pendingPrefix else { return body }
        return [ReferenceConstants.preKeyMessageType] + pendingPrefix + body
    }

    /// Decrypts a 0x21 message; the initiator stops sending prekey messages.
    mutating func decrypt(_ message: [UInt8]) throws -> [UInt8] {
        let plaintext = try ratchet.decrypt(message)
        pendingPrefix = nil
        generation += 1
        return plaintext
    }

    /// Whether the session knows the ratchet key `key` (SPEC §3): its DHr, or skipped keys under it.
    func recognizes(ratchetKey key: ArraySlice<UInt8>) -> Bool {
        if let remote = ratchet.remoteKey, remote.elementsEqual(key) { return true }
        return ratchet.skippedOrder.contains { $0.ratchetKey.elementsEqual(key) }
    }
}

/// The sessions held for one peer device (SPEC §3 "Sessions per address"), composed naively:
/// the current session and up to 40 previous ones, most recent first. A 0x21 message is tried
/// on the current session, then on the previous ones; a session that knows the message's
/// ratchet key decides. The work across previous sessions is bounded as the library documents
/// it (`SessionRecord`): a message on a ratchet key no session knows takes a DH step only in
/// the current session and, when its header.pn equals that session's receiving counter, in
/// the most recent previous one.
struct ReferencePeerRecord<B: ReferenceBackend> {
    var current: ReferenceSessionRecord<B>?
    var previous: [ReferenceSessionRecord<B>] = []

    /// Makes `session` current; the current one becomes the most recent previous one.
    mutating func promote(_ session: ReferenceSessionRecord<B>) {
        if let current {
            previous.insert(current, at: 0)
            if previous.count > ReferenceConstants.maxPreviousSessions { previous.removeLast() }
        }
        current = session
    }

    /// Decrypts a 0x21 message, transactionally (each session's decrypt is).
    mutating func decrypt(_ message: [UInt8]) throws -> [UInt8] {
        guard !message.isEmpty else { throw ReferenceError.invalidMessage }
        guard message[0] == ReferenceConstants.messageType else { throw ReferenceError.unsupportedVersion }
        guard message.count >= ReferenceConstants.headerCount + ReferenceConstants.tagCount else {
            throw ReferenceError.invalidMessage
        }
        let ratchetKey = message[1..<33]
        let previousCounter = UInt64(message.u32(at: 33))
        var currentError: Error?
        if var session = current {
            do {
                let plaintext = try session.decrypt(message)
                current = session
                return plaintext
            } catch {
                if session.recognizes(ratchetKey: ratchetKey) { throw error }
                currentError = error
            }
        }
        for index in previous.indices {
            let knowsKey = previous[index].recognizes(ratchetKey: ratchetKey)
            guard knowsKey || (index == 0 && previousCounter == previous[index].ratchet.receiveCounter) else { continue }
            var session = previous[index]
            do {
                let plaintext = try session.decrypt(message)
                previous.remove(at: index)
                promote(session)
                return plaintext
            } catch {
                if knowsKey { throw error }
            }
        }
        throw currentError ?? ReferenceError.noSession
    }
}

/// Session save and load, naively, in exactly the layout of SessionKit's persisted session
/// (version 5, see `SessionStatePersistence.swift`): `"SKST" || 0x01 || 0x05 || body ||
/// SHA-256(…)[0..<16]`, the DHs public key recomputed on load. Fields are appended one by
/// one to an array and parsed back strictly.
enum ReferenceSessionCodec<B: ReferenceBackend> {
    static var maximumMaxStored: UInt32 { 100_000 }

    /// The serialized session.
    static func save(_ record: ReferenceSessionRecord<B>) -> [UInt8] {
        let session = record.ratchet
        var bytes: [UInt8] = [0x53, 0x4b, 0x53, 0x54, 0x01, 0x05]  // "SKST", session, version 5
        bytes.append(record.role)
        bytes.appendU64(record.generation)
        bytes.appendU32(UInt32(session.maxSkip))
        bytes.appendU32(UInt32(session.maxStored))
        bytes += record.localIdentityKey
        bytes += record.remoteIdentityKey
        bytes += record.localAddress.encoded
        bytes += record.remoteAddress.encoded
        bytes += record.baseKey
        bytes += record.prefixDigest
        if let prefix = record.pendingPrefix {
            bytes.append(1)
            bytes.appendU32(UInt32(prefix.count))
            bytes += prefix
        } else {
            bytes.append(0)
        }
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
        bytes.append(record.isPostQuantum ? 1 : 0)
        bytes.appendU32(record.remoteRegistrationID)
        bytes.append(record.isArchived ? 1 : 0)
        // Version 5: when each skipped key was stored, in the order above (0: unknown).
        for position in session.skippedOrder { bytes.appendU64(session.skippedStoredAt[position] ?? 0) }
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
        var checksum = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { all in
            checksum.withUnsafeMutableBytes {
                B.sha256(UnsafeRawBufferPointer(rebasing: all[0..<(bytes.count - 16)]), into: $0)
            }
        }
        guard checksum[0..<16].elementsEqual(bytes[(bytes.count - 16)...]) else { throw ReferenceError.invalidPayload }
        guard bytes[5] == 0x05 else { throw ReferenceError.unsupportedVersion }
        let counterLimit = UInt64(UInt32.max) + 1
        var reader = Reader(bytes: bytes, offset: 6, end: bytes.count - 16)
        let role = try reader.byte()
        guard role == 1 || role == 2 else { throw ReferenceError.invalidPayload }
        let generation = try reader.u64()
        let rawMaxSkip = try reader.u32()
        let rawMaxStored = try reader.u32()
        guard rawMaxSkip <= maximumMaxStored, rawMaxStored <= maximumMaxStored, rawMaxSkip <= rawMaxStored else {
            throw ReferenceError.invalidPayload
        }
        let localIdentityKey = try reader.take(32)
        let remoteIdentityKey = try reader.take(32)
        let localAddress = try reader.address()
        let remoteAddress = try reader.address()
        let baseKey = try reader.x25519Key()
        let prefixDigest = try reader.take(32)
        var pendingPrefix: [UInt8]?
        if try reader.flag() {
            guard role == 1 else { throw ReferenceError.invalidPayload }
            let count = Int(try reader.u32())
            guard count <= 69 + 4 + 4 + ReferenceConstants.kemCiphertextCount + 4 else { throw ReferenceError.invalidPayload }
            let prefix = try reader.take(count)
            // Exactly one P: flags bits 0–2 only, the length they announce, a canonical EK_A, a
            // registration id (bit 2) in 1 … 2^31 − 1; its IK_A, EK_A and digest are the session's.
            guard prefix.count >= 69, prefix[68] & ~0x07 == 0 else { throw ReferenceError.invalidPayload }
            let flags = prefix[68]
            let expected = 69 + (flags & 0x01 != 0 ? 4 : 0) + (flags & 0x02 != 0 ? 4 + ReferenceConstants.kemCiphertextCount : 0)
                + (flags & 0x04 != 0 ? 4 : 0)
            guard prefix.count == expected, prefix[32..<64].withUnsafeBytes(isCanonicalX25519) else {
                throw ReferenceError.invalidPayload
            }
            if flags & 0x04 != 0 {
                let id = prefix.u32(at: expected - 4)
                guard id >= 1, id <= 0x7FFF_FFFF else { throw ReferenceError.invalidPayload }
            }
            var digest = [UInt8](repeating: 0, count: 32)
            prefix.withUnsafeBytes { p in digest.withUnsafeMutableBytes { B.sha256(p, into: $0) } }
            guard prefix[0..<32].elementsEqual(localIdentityKey), prefix[32..<64].elementsEqual(baseKey),
                  digest == prefixDigest
            else { throw ReferenceError.invalidPayload }
            pendingPrefix = prefix
        }
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
        let skippedCount = try reader.u32()
        guard skippedCount <= rawMaxStored else { throw ReferenceError.invalidPayload }
        // The DHs public key is not stored: X25519(secret, 9) again.
        let sendingKey = try B.agreementKey(secret: secret)
        let associatedData = role == 1
            ? localIdentityKey + remoteIdentityKey + localAddress.encoded + remoteAddress.encoded
            : remoteIdentityKey + localIdentityKey + remoteAddress.encoded + localAddress.encoded
        var session = ReferenceRatchet<B>(
            associatedData: associatedData, rootKey: rootKey, sendingKey: sendingKey.key,
            sendingPublicKey: sendingKey.publicKey, remoteKey: remoteKey, keySource: keySource,
            scratch: ScratchBuffer(count: 512), paddedScratch: ScratchBuffer(count: 1024))
        session.sendingChain = sendingChain
        session.receivingChain = receivingChain
        session.sendCounter = sendCounter
        session.receiveCounter = receiveCounter
        session.previousCounter = previousCounter
        session.maxSkip = Int(rawMaxSkip)
        session.maxStored = Int(rawMaxStored)
        session.skipped.reserveCapacity(Int(skippedCount))
        session.skippedOrder.reserveCapacity(Int(skippedCount))
        for _ in 0..<skippedCount {
            let position = ReferenceRatchet<B>.SkippedPosition(ratchetKey: try reader.x25519Key(), counter: try reader.u32())
            guard session.skipped[position] == nil else { throw ReferenceError.invalidPayload }
            session.skipped[position] = try reader.take(32)
            session.skippedOrder.append(position)
        }
        let isPostQuantum = try reader.flag()
        // A pending prefix with a KEM part (flags bit 1) belongs to a post-quantum session.
        if let pendingPrefix, (pendingPrefix[68] & 0x02 != 0) != isPostQuantum { throw ReferenceError.invalidPayload }
        let remoteRegistrationID = try reader.u32()
        guard remoteRegistrationID <= 0x7FFF_FFFF else { throw ReferenceError.invalidPayload }
        let isArchived = try reader.flag()
        for position in session.skippedOrder {
            let storedAt = try reader.u64()
            guard storedAt <= UInt64(Int64.max) else { throw ReferenceError.invalidPayload }
            if storedAt != 0 { session.skippedStoredAt[position] = storedAt }
        }
        guard reader.offset == reader.end else { throw ReferenceError.invalidPayload }
        return ReferenceSessionRecord(
            role: role, generation: generation, localIdentityKey: localIdentityKey, remoteIdentityKey: remoteIdentityKey,
            localAddress: localAddress, remoteAddress: remoteAddress, baseKey: baseKey, prefixDigest: prefixDigest,
            pendingPrefix: pendingPrefix, ratchet: session, isPostQuantum: isPostQuantum,
            remoteRegistrationID: remoteRegistrationID, isArchived: isArchived)
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

        /// `u8(len) || uid || u32(device)`: a user id of 1–255 bytes of well-formed UTF-8.
        mutating func address() throws -> ReferenceAddress {
            let count = Int(try byte())
            guard count > 0 else { throw ReferenceError.invalidPayload }
            let uid = try take(count)
            guard String(validating: uid, as: UTF8.self) != nil else { throw ReferenceError.invalidPayload }
            return ReferenceAddress(uid: uid, deviceID: try u32())
        }
    }
}
