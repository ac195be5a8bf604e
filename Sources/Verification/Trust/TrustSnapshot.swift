@_spi(Storage) import SessionKit

/// All trust records of a store at one moment, one per user, and their persisted form.
///
/// The blob uses SessionKit's state envelope (`StateWriter`, kind `.trust`, version 2):
///
///     magic "SKST" || 0x06 || 0x02 || body || checksum (16)
///     body   = u32(record count) || record*        (records in strictly increasing order of
///                                                 user id UTF-8 bytes)
///     record = u32(len) || user id (UTF-8)
///           || u8(status: 0 unverified, 1 trusted, 2 verified)
///           || u32(len) || identity key     (32 bytes: an Ed25519 public key)
///           || [status 0 only] u32(len) || previous identity key (32 bytes, ≠ identity key)
///           || u32(device count, ≤ 256) || u32(device id)*                  (distinct)
///           || u32(superseded count, ≤ 16) || (u32(len) || key (32 bytes))* (distinct, ≠ identity key)
///
/// Loading is strict: besides the envelope's checks, a user id that is not well-formed UTF-8,
/// an unknown status byte, a key that is not 32 bytes, a previous key equal to the current
/// one, records out of order or repeated, repeated devices or keys, counts over the limits, or
/// trailing bytes are `VerificationError.invalidPayload`.
///
/// Version 1 blobs (written before trust was per user: one record per device, ordered by user
/// id bytes then device id, without devices or superseded keys) still load, folded per user:
/// when all of a user's devices had one key, the user has that key with the strongest status
/// the devices had (a pending change, else verified, else trusted) and all those devices;
/// when they had different keys, the user's record is a change awaiting acceptance, from the
/// key of the user's lowest device id to the first other key, listing the devices with it.
public struct TrustSnapshot: Sendable, Equatable {
    /// The envelope version written.
    public static let formatVersion: UInt8 = 2

    /// The records by user.
    public let records: [TrustUserID: TrustRecord]

    /// Wraps records.
    public init(records: [TrustUserID: TrustRecord]) {
        self.records = records
    }

    /// The persisted blob (deterministic: records sorted by user id bytes).
    public var serialized: [UInt8] {
        var writer = StateWriter(kind: .trust, version: Self.formatVersion)
        let ordered = records.sorted { $0.key < $1.key }
        writer.write(UInt32(truncatingIfNeeded: ordered.count))
        for (user, record) in ordered {
            writer.writeVariable(user.utf8)
            writer.write(record.status.rawValue)
            writer.writeVariable(record.identityKey.rawRepresentation)
            if record.status == .unverified {
                writer.writeVariable(record.previousIdentityKey?.rawRepresentation ?? [])
            }
            writer.write(UInt32(truncatingIfNeeded: record.devices.count))
            for device in record.devices { writer.write(device) }
            writer.write(UInt32(truncatingIfNeeded: record.supersededIdentityKeys.count))
            for key in record.supersededIdentityKeys { writer.writeVariable(key.rawRepresentation) }
        }
        return writer.finish()
    }

    /// Loads a blob written by `serialized` (version 2, or version 1, folded per user).
    /// - Throws: `VerificationError.invalidPayload` for a malformed blob (see the layout above),
    ///   `VerificationError.unsupportedVersion` for an envelope version other than 1 and 2.
    public init(serialized blob: [UInt8]) throws(VerificationError) {
        do {
            self.init(records: try Self.decode(blob))
        } catch .unsupportedVersion {
            throw .unsupportedVersion
        } catch {
            throw .invalidPayload
        }
    }

    /// The records of a blob (the envelope's errors as `SessionError`).
    private static func decode(_ blob: [UInt8]) throws(SessionError) -> [TrustUserID: TrustRecord] {
        var reader = try StateReader(blob, kind: .trust, supportedVersions: 1 ... Self.formatVersion)
        let count = try reader.readUInt32()
        var records: [TrustUserID: TrustRecord] = [:]
        var perDevice: [(user: TrustUserID, device: UInt32, record: TrustRecord)] = []
        var last: (user: TrustUserID, device: UInt32)?
        for _ in 0 ..< count {
            let userBytes = try reader.readVariable()
            guard StrictUTF8.isValid(userBytes) else { throw .invalidPayload }
            let user: TrustUserID
            do { user = try TrustUserID(String(decoding: userBytes, as: UTF8.self)) } catch { throw .invalidPayload }
            let device = reader.version == 1 ? try reader.readUInt32() : 0
            if let last {
                let ordered = last.user < user || (reader.version == 1 && last.user == user && last.device < device)
                guard ordered else { throw .invalidPayload }
            }
            last = (user, device)
            guard let status = TrustStatus(rawValue: try reader.readByte()) else { throw .invalidPayload }
            let key = try Self.readKey(&reader)
            var previous: Ed25519.PublicKey?
            if status == .unverified {
                let earlier = try Self.readKey(&reader)
                guard earlier != key else { throw .invalidPayload }
                previous = earlier
            }
            if reader.version == 1 {
                perDevice.append((user, device, TrustRecord(identityKey: key, status: status, previousIdentityKey: previous)))
                continue
            }
            let deviceCount = Int(try reader.readUInt32())
            guard deviceCount <= TrustRecord.maximumDeviceCount else { throw .invalidPayload }
            var devices: [UInt32] = []
            for _ in 0 ..< deviceCount { devices.append(try reader.readUInt32()) }
            let keyCount = Int(try reader.readUInt32())
            guard keyCount <= TrustRecord.maximumSupersededKeyCount else { throw .invalidPayload }
            var superseded: [Ed25519.PublicKey] = []
            for _ in 0 ..< keyCount { superseded.append(try Self.readKey(&reader)) }
            guard Set(devices).count == devices.count, Set(superseded).count == superseded.count,
                  !superseded.contains(key) else { throw .invalidPayload }
            records[user] = TrustRecord(
                identityKey: key, status: status, previousIdentityKey: previous, devices: devices,
                supersededIdentityKeys: superseded)
        }
        try reader.finish()
        for (user, devices) in Dictionary(grouping: perDevice, by: \.user) {
            records[user] = fold(devices.map { ($0.device, $0.record) })
        }
        return records
    }

    /// One user's version-1 records (one per device, in increasing device order) as one record
    /// (the rule in the type's documentation).
    @_spi(Storage) public static func fold(_ devices: [(device: UInt32, record: TrustRecord)]) -> TrustRecord? {
        guard let first = devices.first?.record else { return nil }
        let key = first.identityKey
        let withKey = devices.filter { $0.record.identityKey == key }
        if let other = devices.first(where: { $0.record.identityKey != key })?.record.identityKey {
            return TrustRecord(
                identityKey: key, status: .unverified, previousIdentityKey: other,
                devices: Array(withKey.map(\.device).prefix(TrustRecord.maximumDeviceCount)))
        }
        let ids = Array(withKey.map(\.device).prefix(TrustRecord.maximumDeviceCount))
        if let pending = devices.first(where: { $0.record.status == .unverified })?.record {
            return TrustRecord(identityKey: key, status: .unverified, previousIdentityKey: pending.previousIdentityKey, devices: ids)
        }
        let status: TrustStatus = devices.contains { $0.record.status == .verified } ? .verified : .trusted
        return TrustRecord(identityKey: key, status: status, previousIdentityKey: nil, devices: ids)
    }

    /// A stored identity key: 32 bytes (an Ed25519 public key).
    private static func readKey(_ reader: inout StateReader) throws(SessionError) -> Ed25519.PublicKey {
        let key = try reader.readVariable(maximum: Ed25519.keyByteCount)
        do { return try Ed25519.PublicKey(rawRepresentation: key) } catch { throw .invalidPayload }
    }
}
