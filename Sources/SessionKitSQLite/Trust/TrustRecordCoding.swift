import SignalPrimitives
import Verification

/// The sealed value of a `trust` row (value version 1):
///
///     status u8 (0 unverified, 1 trusted, 2 verified)
///     u16(len) || identity key            (32 bytes: an Ed25519 public key)
///     hasPrevious u8 (0 or 1)
///     [hasPrevious = 1] u16(len) || previous identity key (32 bytes)
///
/// The address is not in the value: the row key is its keyed hash, bound into the value's
/// additional data.
enum TrustRecordCoding {
    /// The record as a value.
    static func encode(_ record: TrustRecord) -> [UInt8] {
        var out: [UInt8] = [record.status.rawValue]
        out.appendBigEndian(UInt16(truncatingIfNeeded: record.identityKey.rawRepresentation.count))
        out.append(contentsOf: record.identityKey.rawRepresentation)
        if let previous = record.previousIdentityKey {
            out.append(1)
            out.appendBigEndian(UInt16(truncatingIfNeeded: previous.rawRepresentation.count))
            out.append(contentsOf: previous.rawRepresentation)
        } else {
            out.append(0)
        }
        return out
    }

    /// Decodes an opened value.
    /// - Throws: `SQLiteStoreError.invalidValue(table: "trust")` when it does not decode.
    static func decode(_ value: SecureBytes) throws(SQLiteStoreError) -> TrustRecord {
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
                guard reader.isAtEnd else { throw ValueDecodingError() }
                return TrustRecord(identityKey: key, status: status, previousIdentityKey: previous)
            }
        } catch {
            throw .invalidValue(table: SealedTable.trust.name)
        }
    }

    /// A stored identity key: 32 bytes (an Ed25519 public key).
    private static func readKey(_ reader: inout ValueReader) throws(ValueDecodingError) -> Ed25519.PublicKey {
        let count = Int(try reader.readUInt16())
        guard count == Ed25519.keyByteCount else { throw ValueDecodingError() }
        do { return try Ed25519.PublicKey(rawRepresentation: try reader.readBytes(count)) } catch { throw ValueDecodingError() }
    }
}
