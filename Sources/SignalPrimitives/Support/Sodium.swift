import CSodium

/// One-time, thread-safe initialisation of libsodium.
///
/// Every public entry point that calls into libsodium goes through `Sodium.ensureInitialized()`
/// (directly or through a key type's initialiser). The result of `sodium_init()` is computed
/// once, lazily, by Swift's thread-safe global initialisation.
public enum Sodium {
    private static let initializationResult: Int32 = sodium_init()

    /// Makes sure libsodium is initialised.
    /// - Throws: `CryptoError.libraryInitializationFailed` when `sodium_init()` failed.
    @inlinable
    public static func ensureInitialized() throws(CryptoError) {
        if !isInitialized { throw .libraryInitializationFailed }
    }

    /// Whether `sodium_init()` succeeded (it is run on first access).
    public static var isInitialized: Bool { initializationResult >= 0 }

    /// The version string of the linked libsodium.
    public static var libraryVersion: String { String(cString: sodium_version_string()) }
}
