@_spi(Storage) import SessionKit
import SignalPrimitives

/// The sealed value of an `archive` row (value version 1):
///
///     u16(len) || message id (UTF-8, 1 … 65535 bytes) || plaintext
///
/// sealed for the row key `conversation_hash (32) || message_hash (32) || i64(timestamp)`, so a
/// value moved to another conversation, another message or another timestamp does not open.
enum ArchiveValueCoding {
    /// The longest message id, in UTF-8 bytes.
    static let maximumMessageIDByteCount = Int(UInt16.max)

    /// The row key bound into the value.
    static func rowKey(conversationHash: [UInt8], messageHash: [UInt8], timestamp: Int64) -> [UInt8] {
        var key = conversationHash + messageHash
        key.appendBigEndian(timestamp)
        return key
    }

    /// The value (the caller wipes it after sealing).
    static func encode(messageID: [UInt8], plaintext: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(2 + messageID.count + plaintext.count)
        out.appendBigEndian(UInt16(truncatingIfNeeded: messageID.count))
        out.append(contentsOf: messageID)
        out.append(contentsOf: plaintext)
        return out
    }

    /// The message id and the plaintext (in wiping storage) of an opened value.
    /// - Throws: `SQLiteStoreError.invalidValue(table: "archive")` when it does not decode.
    static func decode(_ value: SecureBytes) throws(SQLiteStoreError) -> (messageID: String, plaintext: SecureBytes) {
        do {
            return try value.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(ValueDecodingError) in
                var reader = ValueReader(bytes)
                let idBytes = try reader.readBytes(Int(try reader.readUInt16()))
                guard !idBytes.isEmpty, let id = String(validating: idBytes, as: UTF8.self) else { throw ValueDecodingError() }
                return (id, SecureBytes(copying: reader.readRest()))
            }
        } catch {
            throw .invalidValue(table: SealedTable.archive.name)
        }
    }
}
