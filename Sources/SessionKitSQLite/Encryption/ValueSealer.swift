@_spi(Storage) import SessionKit
import SignalPrimitives

/// Seals and opens the store's values, and hashes the ids that serve as row keys.
///
/// A sealed value, as stored in a `sealed` BLOB column:
///
///     nonce (24, random per write) || XChaCha20-Poly1305 ciphertext || tag (16)
///
/// under `StoreKeys.sealingKey`, with the additional data
///
///     "SessionKitSQLite sealed value" (29 ASCII bytes)
///     || u32(table.valueVersion) || u8(len(table name)) || table name (ASCII)
///     || u32(len(row key)) || row key
///
/// (integers big-endian). The row key is what identifies the row in its table (the hashed id
/// columns, and any clear column whose change must be detected, such as an archive
/// timestamp). A value moved to another row, another table or another file, or written under
/// another value layout, fails to open: `SQLiteStoreError.damagedValue(table:)`.
///
/// A hashed row key is `HMAC-SHA256(row-key key, u8(len(label)) || label || id)` (32 bytes),
/// with the label of a `RowKeyDomain`.
struct ValueSealer: Sendable {
    /// The constant that starts every value's additional data.
    static let additionalDataPrefix = Array("SessionKitSQLite sealed value".utf8)
    /// Bytes a sealed value adds to its plaintext (nonce and tag).
    static let overhead = XChaCha20Poly1305.nonceByteCount + XChaCha20Poly1305.tagByteCount

    private let keys: StoreKeys

    init(keys: StoreKeys) { self.keys = keys }

    /// The additional data binding a value to `table` and `rowKey`.
    static func additionalData(table: SealedTable, rowKey: [UInt8]) -> [UInt8] {
        var aad = additionalDataPrefix
        let name = Array(table.name.utf8)
        aad.reserveCapacity(aad.count + 4 + 1 + name.count + 4 + rowKey.count)
        aad.appendBigEndian(table.valueVersion)
        aad.append(UInt8(truncatingIfNeeded: name.count))
        aad.append(contentsOf: name)
        aad.appendBigEndian(UInt32(truncatingIfNeeded: rowKey.count))
        aad.append(contentsOf: rowKey)
        return aad
    }

    /// Seals `plaintext` for the row `rowKey` of `table`.
    /// - Throws: `SQLiteStoreError.database` only if libsodium is unusable or the value is
    ///   beyond XChaCha20-Poly1305's limit.
    func seal(_ plaintext: UnsafeRawBufferPointer, table: SealedTable, rowKey: [UInt8]) throws(SQLiteStoreError) -> [UInt8] {
        let nonceCount = XChaCha20Poly1305.nonceByteCount
        var sealed = [UInt8](repeating: 0, count: nonceCount + plaintext.count + XChaCha20Poly1305.tagByteCount)
        let aad = Self.additionalData(table: table, rowKey: rowKey)
        do {
            try sealed.withMutableBytes { (out: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                let nonce = UnsafeMutableRawBufferPointer(rebasing: out[..<nonceCount])
                SystemRandomSource().fill(nonce)
                try keys.sealingKey.withUnsafeBytes { (key: UnsafeRawBufferPointer) throws(CryptoError) in
                    try aad.withBytes { (a: UnsafeRawBufferPointer) throws(CryptoError) in
                        _ = try XChaCha20Poly1305.seal(
                            plaintext, key: key, nonce: UnsafeRawBufferPointer(nonce), authenticating: a,
                            into: UnsafeMutableRawBufferPointer(rebasing: out[nonceCount...]))
                    }
                }
            }
        } catch {
            throw .database("sealing a value for table \(table.name) failed: \(error)")
        }
        return sealed
    }

    /// Seals secret bytes for the row `rowKey` of `table`.
    /// - Throws: see `seal(_:table:rowKey:)`.
    func seal(_ plaintext: SecureBytes, table: SealedTable, rowKey: [UInt8]) throws(SQLiteStoreError) -> [UInt8] {
        try plaintext.withUnsafeBytes { (p: UnsafeRawBufferPointer) throws(SQLiteStoreError) in
            try seal(p, table: table, rowKey: rowKey)
        }
    }

    /// Seals `plaintext` (not secret, or a copy the caller wipes) for the row `rowKey` of `table`.
    /// - Throws: see `seal(_:table:rowKey:)`.
    func seal(_ plaintext: [UInt8], table: SealedTable, rowKey: [UInt8]) throws(SQLiteStoreError) -> [UInt8] {
        try plaintext.withBytes { (p: UnsafeRawBufferPointer) throws(SQLiteStoreError) in
            try seal(p, table: table, rowKey: rowKey)
        }
    }

    /// Opens a value sealed for the row `rowKey` of `table`, into wiping storage.
    /// - Throws: `SQLiteStoreError.damagedValue(table:)` when it is too short or does not
    ///   authenticate (changed, moved from another row, table or file, or another key).
    func open(_ sealed: [UInt8], table: SealedTable, rowKey: [UInt8]) throws(SQLiteStoreError) -> SecureBytes {
        let nonceCount = XChaCha20Poly1305.nonceByteCount
        guard sealed.count >= Self.overhead else { throw .damagedValue(table: table.name) }
        let aad = Self.additionalData(table: table, rowKey: rowKey)
        do {
            return try sealed.withBytes { (input: UnsafeRawBufferPointer) throws(CryptoError) -> SecureBytes in
                try SecureBytes(count: sealed.count - Self.overhead) { (out: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                    try keys.sealingKey.withUnsafeBytes { (key: UnsafeRawBufferPointer) throws(CryptoError) in
                        try aad.withBytes { (a: UnsafeRawBufferPointer) throws(CryptoError) in
                            _ = try XChaCha20Poly1305.open(
                                UnsafeRawBufferPointer(rebasing: input[nonceCount...]), key: key,
                                nonce: UnsafeRawBufferPointer(rebasing: input[..<nonceCount]), authenticating: a, into: out)
                        }
                    }
                }
            }
        } catch {
            throw .damagedValue(table: table.name)
        }
    }

    /// The row key of a value sealed for its row *and* the row's generation (the tables whose
    /// rows have a `generation` column: `sessions`, `sending_chains`, `receiver_states`):
    /// `rowKey || u64(generation)`. A value written at another generation of the same row (an
    /// older copy put back under the current generation) does not open.
    static func rowKey(_ rowKey: [UInt8], generation: UInt64) -> [UInt8] {
        var bound = rowKey
        bound.reserveCapacity(rowKey.count + 8)
        bound.appendBigEndian(Int64(bitPattern: generation))
        return bound
    }

    /// The keyed hash of `id` in `domain`: the row key stored in place of an id that would tell
    /// who the user talks to.
    func rowKey(_ id: [UInt8], in domain: RowKeyDomain) -> [UInt8] {
        var mac = HMACSHA256(key: keys.rowKeyKey)
        let label = Array(domain.label.utf8)
        mac.update([UInt8(truncatingIfNeeded: label.count)])
        mac.update(label)
        mac.update(id)
        return mac.finalize()
    }
}
