@_spi(Storage) import SessionKit

/// All trust records of a store at one moment, and their persisted form.
///
/// The blob uses SessionKit's state envelope (`StateWriter`, kind `.trust`, version 1):
///
///     magic "SKST" || 0x06 || 0x01 || body || checksum (16)
///     body   = u32(record count) || record*        (records in strictly increasing order of
///                                                 (user id UTF-8 bytes, device id))
///     record = u32(len) || user id (UTF-8)  || u32(device id)
///           || u8(status: 0 unverified, 1 trusted, 2 verified)
///           || u32(len) || identity key     (32 bytes: an Ed25519 public key)
///           || [status 0 only] u32(len) || previous identity key (32 bytes, ≠ identity key)
///
/// Loading is strict: besides the envelope's checks, a user id that is not well-formed UTF-8,
/// an unknown status byte, a key that is not 32 bytes, a previous key equal to the current
/// one, records out of order or repeated, or trailing bytes are `VerificationError.invalidPayload`.
public struct TrustSnapshot: Sendable, Equatable {
    /// The envelope version written and read.
    public static let formatVersion: UInt8 = 1

    /// The records by address.
    public let records: [ProtocolAddress: TrustRecord]

    /// Wraps records.
    public init(records: [ProtocolAddress: TrustRecord]) {
        self.records = records
    }

    /// The persisted blob (deterministic: records sorted by address).
    public var serialized: [UInt8] {
        var writer = StateWriter(kind: .trust, version: Self.formatVersion)
        let ordered = records.sorted { Self.precedes($0.key, $1.key) }
        writer.write(UInt32(truncatingIfNeeded: ordered.count))
        for (address, record) in ordered {
            writer.writeVariable(Array(address.userID.utf8))
            writer.write(address.deviceID)
            writer.write(record.status.rawValue)
            writer.writeVariable(record.identityKey.rawRepresentation)
            if record.status == .unverified {
                writer.writeVariable(record.previousIdentityKey?.rawRepresentation ?? [])
            }
        }
        return writer.finish()
    }

    /// Loads a blob written by `serialized`.
    /// - Throws: `VerificationError.invalidPayload` for a malformed blob (see the layout above),
    ///   `VerificationError.unsupportedVersion` for an envelope version other than 1.
    public init(serialized blob: [UInt8]) throws(VerificationError) {
        do {
            self.init(records: try Self.decode(blob))
        } catch .unsupportedVersion {
            throw .unsupportedVersion
        } catch {
            throw .invalidPayload
        }
    }

    /// The records of a blob written by `serialized` (the envelope's errors as `SessionError`).
    private static func decode(_ blob: [UInt8]) throws(SessionError) -> [ProtocolAddress: TrustRecord] {
        var reader = try StateReader(blob, kind: .trust, supportedVersions: Self.formatVersion ... Self.formatVersion)
        let count = try reader.readUInt32()
        var records: [ProtocolAddress: TrustRecord] = [:]
        var last: ProtocolAddress?
        for _ in 0 ..< count {
            let userID = try reader.readVariable()
            guard StrictUTF8.isValid(userID) else { throw .invalidPayload }
            let address: ProtocolAddress
            do { address = try ProtocolAddress(userID: String(decoding: userID, as: UTF8.self), deviceID: try reader.readUInt32()) } catch {
                throw .invalidPayload
            }
            if let last, !Self.precedes(last, address) { throw .invalidPayload }
            guard let status = TrustStatus(rawValue: try reader.readByte()) else { throw .invalidPayload }
            let key = try Self.readKey(&reader)
            var previous: Ed25519.PublicKey?
            if status == .unverified {
                let earlier = try Self.readKey(&reader)
                guard earlier != key else { throw .invalidPayload }
                previous = earlier
            }
            records[address] = TrustRecord(identityKey: key, status: status, previousIdentityKey: previous)
            last = address
        }
        try reader.finish()
        return records
    }

    /// A stored identity key: 32 bytes (an Ed25519 public key).
    private static func readKey(_ reader: inout StateReader) throws(SessionError) -> Ed25519.PublicKey {
        let key = try reader.readVariable(maximum: Ed25519.keyByteCount)
        do { return try Ed25519.PublicKey(rawRepresentation: key) } catch { throw .invalidPayload }
    }

    /// The persisted order: user id UTF-8 bytes, then device id.
    static func precedes(_ a: ProtocolAddress, _ b: ProtocolAddress) -> Bool {
        let userA = Array(a.userID.utf8), userB = Array(b.userID.utf8)
        if userA != userB { return userA.lexicographicallyPrecedes(userB) }
        return a.deviceID < b.deviceID
    }
}
