import CSodium

/// One-time, thread-safe initialisation of libsodium, and the self-check of SPEC §1.
///
/// Every public entry point that calls into libsodium goes through `Sodium.ensureInitialized()`
/// (directly or through a key type's initialiser). The result of `sodium_init()` is computed
/// once, lazily, by Swift's thread-safe global initialisation.
///
/// Self-check. libsodium releases before the fix of CVE-2025-69277 accept some mixed-order
/// points (a prime-order point plus the point of order 2) in
/// `crypto_core_ed25519_is_valid_point`. Once, at initialisation, the library asks the linked
/// libsodium about such a point (B + T, B the base point and T = (0, −1) the point of order 2)
/// and about B itself; where the answer is
/// wrong, `pointValidationIsSound` is false and every operation that validates points throws
/// `CryptoError.unsoundPointValidation` instead of accepting a point it should refuse.
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

    /// Whether the linked libsodium's `crypto_core_ed25519_is_valid_point` rejects a
    /// mixed-order point and accepts the base point (computed once; see the type's
    /// documentation). `false` also when libsodium failed to initialise.
    public static var pointValidationIsSound: Bool { pointValidationCheck }

    private static let pointValidationCheck: Bool =
        isInitialized && checkPointValidation { crypto_core_ed25519_is_valid_point($0) }

    /// B + T, T = (0, −1) the point of order 2: the point (−x_B, −y_B) (y = −4/5 mod p, the sign
    /// bit set), on the curve, of order 2·L, so outside the prime-order subgroup. (Not −B =
    /// (−x_B, y_B), which is in the subgroup.) Affected libsodium releases accept it, since their
    /// subgroup check only looked at L·P's X coordinate (L·(B + T) = T, whose X is 0).
    static let mixedOrderPoint: [UInt8] =
        [0x95] + [UInt8](repeating: 0x99, count: 31)
    /// The base point B (y = 4/5).
    static let basePoint: [UInt8] =
        [0x58] + [UInt8](repeating: 0x66, count: 31)

    /// The self-check against a point validator: it must refuse `mixedOrderPoint` and accept
    /// `basePoint` (a validator that refuses everything is not sound either).
    static func checkPointValidation(_ isValidPoint: (UnsafePointer<UInt8>) -> Int32) -> Bool {
        let refusesMixedOrder = mixedOrderPoint.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { isValidPoint($0) == 0 } ?? false
        }
        let acceptsBase = basePoint.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { isValidPoint($0) == 1 } ?? false
        }
        return refusesMixedOrder && acceptsBase
    }
}
