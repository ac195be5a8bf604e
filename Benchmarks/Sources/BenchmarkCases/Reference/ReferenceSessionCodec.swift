/// Session save and load, naively: every field of a `ReferenceRatchet` appended to an array
/// inside the persisted-state envelope of SessionKit (`"SKST" || kind || version || body ||
/// SHA-256(…)[0..<16]`), and parsed back strictly.
enum ReferenceSessionCodec<B: ReferenceBackend> {
    static var magic: [UInt8] { [0x53, 0x4b, 0x53, 0x54] }  // "SKST"
    static var kind: UInt8 { 0x01 }
    static var version: UInt8 { 1 }

    /// The serialized session.
    static func save(_ session: ReferenceRatchet<B>) -> [UInt8] {
        var bytes = magic + [kind, version]
        bytes.appendU32(UInt32(session.associatedData.count))
        bytes += session.associatedData
        bytes += session.rootKey
        bytes += B.secretBytes(of: session.sendingKey)
        bytes += session.sendingPublicKey
        for optional in [session.remoteKey, session.sendingChain, session.receivingChain] {
            if let value = optional {
                bytes.append(1)
                bytes += value
            } else {
                bytes.append(0)
            }
        }
        bytes.appendU32(UInt32(truncatingIfNeeded: session.sendCounter))
        bytes.appendU32(UInt32(truncatingIfNeeded: session.receiveCounter))
        bytes.appendU32(UInt32(truncatingIfNeeded: session.previousCounter))
        bytes.appendU32(UInt32(session.maxSkip))
        bytes.appendU32(UInt32(session.maxStored))
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

    /// The session in `bytes`, or `invalidPayload`.
    static func load(
        _ bytes: [UInt8], keySource: @escaping () throws -> (key: B.AgreementKey, publicKey: [UInt8])
    ) throws -> ReferenceRatchet<B> {
        guard bytes.count >= 6 + 16, Array(bytes[0..<4]) == magic, bytes[4] == kind else {
            throw ReferenceError.invalidPayload
        }
        guard bytes[5] == version else { throw ReferenceError.unsupportedVersion }
        var checksum = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { all in
            checksum.withUnsafeMutableBytes { B.sha256(UnsafeRawBufferPointer(rebasing: all[0..<(bytes.count - 16)]), into: $0) }
        }
        guard checksum[0..<16].elementsEqual(bytes[(bytes.count - 16)...]) else { throw ReferenceError.invalidPayload }
        var reader = Reader(bytes: bytes, offset: 6, end: bytes.count - 16)
        let adCount = Int(try reader.u32())
        let associatedData = try reader.take(adCount)
        let rootKey = try reader.take(32)
        let secret = try reader.take(32)
        let publicKey = try reader.take(32)
        let remoteKey = try reader.optional()
        let sendingChain = try reader.optional()
        let receivingChain = try reader.optional()
        let sendCounter = try reader.u32()
        let receiveCounter = try reader.u32()
        let previousCounter = try reader.u32()
        let maxSkip = try reader.u32()
        let maxStored = try reader.u32()
        let skippedCount = Int(try reader.u32())
        var session = ReferenceRatchet<B>(
            associatedData: associatedData, rootKey: rootKey,
            sendingKey: try B.restoreAgreementKey(secret: secret, publicKey: publicKey), sendingPublicKey: publicKey,
            remoteKey: remoteKey, keySource: keySource,
            scratch: ScratchBuffer(count: 512), paddedScratch: ScratchBuffer(count: 1024))
        session.sendingChain = sendingChain
        session.receivingChain = receivingChain
        session.sendCounter = UInt64(sendCounter)
        session.receiveCounter = UInt64(receiveCounter)
        session.previousCounter = UInt64(previousCounter)
        session.maxSkip = Int(maxSkip)
        session.maxStored = Int(maxStored)
        session.skipped.reserveCapacity(skippedCount)
        session.skippedOrder.reserveCapacity(skippedCount)
        for _ in 0..<skippedCount {
            let position = ReferenceRatchet<B>.SkippedPosition(ratchetKey: try reader.take(32), counter: try reader.u32())
            session.skipped[position] = try reader.take(32)
            session.skippedOrder.append(position)
        }
        guard reader.offset == reader.end else { throw ReferenceError.invalidPayload }
        return session
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

        mutating func u32() throws -> UInt32 {
            guard end - offset >= 4 else { throw ReferenceError.invalidPayload }
            defer { offset += 4 }
            return bytes.u32(at: offset)
        }

        mutating func optional() throws -> [UInt8]? {
            guard end - offset >= 1 else { throw ReferenceError.invalidPayload }
            let flag = bytes[offset]
            offset += 1
            switch flag {
            case 0: return nil
            case 1: return try take(32)
            default: throw ReferenceError.invalidPayload
            }
        }
    }
}
