@_spi(Storage) import SessionKit

/// The epoch of one store file as kept beside its storage key (restore detection): which file
/// (`fileID`) and how many times it was opened (`value`).
///
/// `SQLiteProtocolStore` advances the epoch inside the file at every open and then hands the
/// new value to its `StoreEpochKeeper`, which keeps it where the storage key is (the key file,
/// or the Keychain). A file opened later whose own epoch is behind the kept one is an older copy
/// of itself (see `SQLiteProtocolStore.restoredFromOlderCopy`).
///
/// `fileID` is a keyed hash of the file's salt under the storage key: it tells one store's epoch
/// from another's (a new file, or another store opened with the same key, never compares with
/// an epoch it did not write) and says nothing about the file without the key. Neither field is
/// a secret. Its stored form (`serialized`, 24 bytes: `fileID || u64(value)` big-endian) is what
/// an app keeps in the Keychain.
public struct StoreEpoch: Sendable, Hashable, CustomStringConvertible {
    /// The length of `fileID`.
    public static let fileIDByteCount = 16
    /// The length of `serialized`.
    public static let serializedByteCount = fileIDByteCount + 8

    /// Which store file the epoch belongs to (a keyed hash of the file's salt).
    public let fileID: [UInt8]
    /// The epoch: how many times the file was opened (a counter, never a time).
    public let value: UInt64

    /// An epoch from its parts.
    /// - Throws: `SQLiteStoreError.invalidArgument` unless `fileID` holds 16 bytes.
    public init(fileID: [UInt8], value: UInt64) throws(SQLiteStoreError) {
        guard fileID.count == Self.fileIDByteCount else { throw .invalidArgument("a store epoch's file id has 16 bytes") }
        self.fileID = fileID
        self.value = value
    }

    /// Decodes the stored form (`serialized`).
    /// - Throws: `SQLiteStoreError.invalidArgument` unless `serialized` holds exactly 24 bytes.
    public init(serialized: [UInt8]) throws(SQLiteStoreError) {
        guard serialized.count == Self.serializedByteCount else { throw .invalidArgument("a stored store epoch has 24 bytes") }
        fileID = Array(serialized.prefix(Self.fileIDByteCount))
        value = serialized.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// The stored form: `fileID || u64(value)`, big-endian (24 bytes).
    public var serialized: [UInt8] {
        var out = fileID
        out.appendBigEndian(Int64(bitPattern: value))
        return out
    }

    /// The value and the first bytes of the file id.
    public var description: String {
        "StoreEpoch(\(value), file \(fileID.prefix(4).map { String($0, radix: 16) }.joined())…)"
    }
}
