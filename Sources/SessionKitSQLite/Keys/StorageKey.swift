import SignalPrimitives

/// The 32-byte secret a `SQLiteProtocolStore` seals its values under, held in storage that is
/// wiped (`sodium_memzero`) when the last copy goes.
///
/// The app supplies it and keeps it outside the database file:
/// - On Apple platforms, keep it in the Keychain (a generic password item with
///   `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`, so it never leaves the device and is
///   readable by background tasks after the first unlock): `generate()` a key on first launch,
///   store its bytes (`withUnsafeBytes`), and rebuild it with `init(bytes:)` on later launches.
/// - On Linux, `loadOrCreateKeyFile(at:)` keeps it in a file only its owner can read (0600),
///   next to (or better: on another volume than) the database.
///
/// - Under a passphrase: `createPassphraseKeyFile(at:passphrase:)` keeps a random key in an age
///   scrypt file (see the article "Backups and Key Files"); changing the passphrase rewrites
///   that small file only.
///
/// Losing the key loses the store: nothing in the file can be opened without it. The key itself
/// is random, never derived from a passphrase: a passphrase only wraps it.
///
/// `description` never shows the key.
public struct StorageKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The key length in bytes.
    public static let byteCount = 32

    /// The key bytes, wiped on release.
    let storage: SecureBytes

    /// Copies a 32-byte key. The caller should wipe its own copy (`SecureMemory.zero`).
    /// - Throws: `SQLiteStoreError.invalidStorageKeyLength` unless exactly 32 bytes are given.
    public init(bytes: [UInt8]) throws(SQLiteStoreError) {
        guard bytes.count == Self.byteCount else { throw .invalidStorageKeyLength(bytes.count) }
        storage = SecureBytes(copying: bytes)
    }

    /// Copies a 32-byte key from a buffer (for keys read into memory the caller wipes).
    /// - Throws: `SQLiteStoreError.invalidStorageKeyLength` unless exactly 32 bytes are given.
    public init(bytes: UnsafeRawBufferPointer) throws(SQLiteStoreError) {
        guard bytes.count == Self.byteCount else { throw .invalidStorageKeyLength(bytes.count) }
        storage = SecureBytes(copying: bytes)
    }

    /// Wraps 32 bytes already held in secure storage (no copy is made).
    /// - Throws: `SQLiteStoreError.invalidStorageKeyLength` unless `storage` holds 32 bytes.
    public init(storage: SecureBytes) throws(SQLiteStoreError) {
        guard storage.count == Self.byteCount else { throw .invalidStorageKeyLength(storage.count) }
        self.storage = storage
    }

    /// A new random key from `random` (the system CSPRNG by default; pass another source only
    /// in tests).
    public static func generate(using random: any RandomSource = SystemRandomSource()) -> StorageKey {
        StorageKey(uncheckedStorage: SecureBytes(count: byteCount) { random.fill($0) })
    }

    init(uncheckedStorage: SecureBytes) { storage = uncheckedStorage }

    /// Calls `body` with the key bytes, for example to store them in the Keychain. Do not let
    /// the pointer escape, and wipe any copy.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try storage.withUnsafeBytes(body)
    }

    /// The key as a `SymmetricKey` (the same wiping storage), the input of the subkey derivation.
    var symmetricKey: SymmetricKey { SymmetricKey(storage: storage) }

    /// A redacted description: the length only.
    public var description: String { "StorageKey(32 bytes, redacted)" }
    /// A redacted description: the length only.
    public var debugDescription: String { description }
}

extension StorageKey: CustomReflectable {
    /// A mirror without children, so `dump` and debuggers show no key.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
