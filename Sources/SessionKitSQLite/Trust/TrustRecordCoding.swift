@_spi(Storage) import SessionKit
import SignalPrimitives
import Verification

/// The sealed values of the trust tables.
///
/// `trust_users` (value version 3), one user:
///
///     status u8 (0 unverified, 1 trusted, 2 verified)
///     u16(len) || identity key            (32 bytes: an Ed25519 public key)
///     hasPrevious u8 (0 or 1)
///     [hasPrevious = 1] u16(len) || previous identity key (32 bytes)
///     u16(device count) || u32(device id)*
///     u16(superseded count) || (u16(len) || key (32 bytes))*
///
/// The schema-1 `trust` rows (value version 1, one device) hold the first four fields only.
/// The user or address is not in the value: the row key is its keyed hash, bound into the
/// value's additional data.
enum TrustRecordCoding {
    /// The record as a `trust_users` value.
    static func encode(_ record: TrustRecord) -> [UInt8] {
        var out: [UInt8] = [record.status.rawValue]
        appendKey(record.identityKey, to: &out)
        if let previous = record.previousIdentityKey {
            out.append(1)
            appendKey(previous, to: &out)
        } else {
            out.append(0)
        }
        out.appendBigEndian(UInt16(truncatingIfNeeded: record.devices.count))
        for device in record.devices { out.appendBigEndian(device) }
        out.appendBigEndian(UInt16(truncatingIfNeeded: record.supersededIdentityKeys.count))
        for key in record.supersededIdentityKeys { appendKey(key, to: &out) }
        return out
    }

    /// Decodes an opened value: a `trust_users` value, or with `perDevice` a schema-1 `trust`
    /// value.
    /// - Throws: `SQLiteStoreError.invalidValue(table:)` when it does not decode.
    static func decode(_ value: SecureBytes, perDevice: Bool = false) throws(SQLiteStoreError) -> TrustRecord {
        let table = perDevice ? SealedTable.trust : SealedTable.trustUsers
        do {
            return try value.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(ValueDecodingError) -> TrustRecord in
                var reader = ValueReader(bytes)
                guard let status = TrustStatus(rawValue: try reader.readByte()) else { throw ValueDecodingError() }
                let key = try readKey(&reader)
                var previous: Ed25519.PublicKey?
                switch try reader.readByte() {
                case 0: previous = nil
                case 1: previous = try readKey(&reader)
                default: throw ValueDecodingError()
                }
                var devices: [UInt32] = []
                var superseded: [Ed25519.PublicKey] = []
                if !perDevice {
                    let deviceCount = Int(try reader.readUInt16())
                    guard deviceCount <= TrustRecord.maximumDeviceCount else { throw ValueDecodingError() }
                    for _ in 0 ..< deviceCount { devices.append(try reader.readUInt32()) }
                    let keyCount = Int(try reader.readUInt16())
                    guard keyCount <= TrustRecord.maximumSupersededKeyCount else { throw ValueDecodingError() }
                    for _ in 0 ..< keyCount { superseded.append(try readKey(&reader)) }
                }
                guard reader.isAtEnd else { throw ValueDecodingError() }
                return TrustRecord(
                    identityKey: key, status: status, previousIdentityKey: previous, devices: devices,
                    supersededIdentityKeys: superseded)
            }
        } catch {
            throw .invalidValue(table: table.name)
        }
    }

    /// `u16(32) || key`.
    private static func appendKey(_ key: Ed25519.PublicKey, to out: inout [UInt8]) {
        out.appendBigEndian(UInt16(truncatingIfNeeded: key.rawRepresentation.count))
        out.append(contentsOf: key.rawRepresentation)
    }

    /// A stored identity key: 32 bytes (an Ed25519 public key).
    private static func readKey(_ reader: inout ValueReader) throws(ValueDecodingError) -> Ed25519.PublicKey {
        let count = Int(try reader.readUInt16())
        guard count == Ed25519.keyByteCount else { throw ValueDecodingError() }
        do { return try Ed25519.PublicKey(rawRepresentation: try reader.readBytes(count)) } catch { throw ValueDecodingError() }
    }
}
