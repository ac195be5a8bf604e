import SignalPrimitives

/// The subkeys of one store file, derived from the app's `StorageKey` and the file's random
/// salt (`meta.fileSalt`, 32 bytes, stored in clear):
///
///     sealing key  = HKDF-SHA256(ikm: storage key, salt: file salt, info: "SessionKitSQLite v1 seal values",   32)
///     row-key key  = HKDF-SHA256(ikm: storage key, salt: file salt, info: "SessionKitSQLite v1 hash row keys", 32)
///
/// The sealing key seals values with XChaCha20-Poly1305; the row-key key keys HMAC-SHA256 over
/// ids. Separate labels keep the two uses independent. The per-file salt gives every file its
/// own subkeys even when an app uses one storage key for several accounts: values copied from
/// one file to another do not open, and equal ids hash differently in the two files.
struct StoreKeys: Sendable {
    /// The HKDF info of the sealing key.
    static let sealingLabel = Array("SessionKitSQLite v1 seal values".utf8)
    /// The HKDF info of the row-key hashing key.
    static let rowKeyLabel = Array("SessionKitSQLite v1 hash row keys".utf8)
    /// The length of the per-file salt.
    static let fileSaltByteCount = 32

    /// The XChaCha20-Poly1305 key of every sealed value.
    let sealingKey: SymmetricKey
    /// The HMAC-SHA256 key of hashed row keys.
    let rowKeyKey: SymmetricKey

    /// Derives the subkeys of the file with `fileSalt`.
    /// - Throws: `SQLiteStoreError.database` only if HKDF fails (it does not for 32-byte outputs).
    init(storageKey: StorageKey, fileSalt: [UInt8]) throws(SQLiteStoreError) {
        do {
            sealingKey = try HKDF.deriveKey(inputKeyMaterial: storageKey.symmetricKey, salt: fileSalt, info: Self.sealingLabel, outputByteCount: 32)
            rowKeyKey = try HKDF.deriveKey(inputKeyMaterial: storageKey.symmetricKey, salt: fileSalt, info: Self.rowKeyLabel, outputByteCount: 32)
        } catch {
            throw .database("key derivation failed: \(error)")
        }
    }
}

extension StoreKeys: CustomStringConvertible, CustomReflectable {
    /// A redacted description.
    var description: String { "StoreKeys(redacted)" }
    /// A mirror without children, so `dump` and debuggers show no key.
    var customMirror: Mirror { Mirror(self, children: [:]) }
}
