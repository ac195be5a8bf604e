/// Where a store's epoch is kept beside its storage key, outside the database file, for
/// restore detection (`SQLiteProtocolStore.restoredFromOlderCopy`).
///
/// Keep it where the storage key is and where a restored copy of the app's files does not bring
/// back an old value: the key file on Linux (`KeyFileEpochKeeper`), on Apple platforms a
/// Keychain item beside the key's, with `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`
/// (store `StoreEpoch.serialized`, read it back with `StoreEpoch(serialized:)`):
///
///     struct KeychainEpochKeeper: StoreEpochKeeper {
///         func readEpoch() throws(SQLiteStoreError) -> StoreEpoch? {
///             guard let bytes = try keychainItem("store-epoch") else { return nil }  // SecItemCopyMatching
///             return try StoreEpoch(serialized: bytes)
///         }
///         func writeEpoch(_ epoch: StoreEpoch) throws(SQLiteStoreError) {
///             try setKeychainItem("store-epoch", epoch.serialized)                    // SecItemUpdate / SecItemAdd
///         }
///     }
///
/// The store reads the epoch before its opening transaction and writes the new one after that
/// transaction committed (see `SQLiteProtocolStore.init(path:storageKey:identity:epochKeeper:options:)`
/// for why in this order). A keeper that has lost its value returns `nil`: that open then
/// detects nothing, and raises no false alarm. One keeper per store file: two stores writing one
/// keeper overwrite each other's epoch (each then detects nothing, and raises no false alarm).
public protocol StoreEpochKeeper: Sendable {
    /// The epoch last written, or `nil` when none was.
    /// - Throws: `SQLiteStoreError` when it cannot be read (the store then does not open).
    func readEpoch() throws(SQLiteStoreError) -> StoreEpoch?
    /// Keeps `epoch`, replacing the one held, durably (a crash after it returned must not lose
    /// it). Two processes opening one store at once may call it in either order: a keeper may
    /// keep the greater value of one file (`KeyFileEpochKeeper` does), which only sharpens the
    /// detection.
    /// - Throws: `SQLiteStoreError` when it cannot be written (the store then does not open).
    func writeEpoch(_ epoch: StoreEpoch) throws(SQLiteStoreError)
}

/// Keeps a store's epoch in its storage-key file (`StorageKey.loadOrCreateKeyFile(at:)`): the
/// first epoch written upgrades a version-1 key file (the 32 key bytes) to version 2 (the key
/// and the epoch), atomically and with the same checks of owner, mode and folder.
public struct KeyFileEpochKeeper: StoreEpochKeeper {
    /// The key file's path.
    public let path: String

    /// A keeper for the key file at `path` (which must exist: create it with
    /// `StorageKey.loadOrCreateKeyFile(at:)`).
    public init(path: String) {
        self.path = path
    }

    /// The epoch in the key file, `nil` for a version-1 file.
    /// - Throws: the errors of `StorageKey.readKeyFile(at:)`.
    public func readEpoch() throws(SQLiteStoreError) -> StoreEpoch? {
        try StorageKey.readKeyFileEpoch(at: path)
    }

    /// Writes `epoch` into the key file (`StorageKey.writeKeyFileEpoch(_:at:)`), keeping the
    /// greater value when the file already holds an epoch of the same store.
    /// - Throws: the errors of `StorageKey.writeKeyFileEpoch(_:at:)`.
    public func writeEpoch(_ epoch: StoreEpoch) throws(SQLiteStoreError) {
        try StorageKey.writeKeyFileEpoch(epoch, at: path)
    }
}
