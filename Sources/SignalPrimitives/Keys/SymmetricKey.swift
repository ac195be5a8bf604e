/// A secret symmetric key (AEAD key, HMAC key, derived secret) held in zeroing storage.
///
/// Equality is constant-time; `description` never shows the key.
public struct SymmetricKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The zeroing storage behind the key.
    public let storage: SecureBytes

    /// Wraps existing secure storage.
    public init(storage: SecureBytes) { self.storage = storage }

    /// Copies `data` into a new key. The caller should wipe its own copy.
    public init(data: [UInt8]) { storage = SecureBytes(copying: data) }

    /// Copies `bytes` into a new key.
    public init(bytes: UnsafeRawBufferPointer) { storage = SecureBytes(copying: bytes) }

    /// A new random key of `byteCount` bytes from `random` (the system CSPRNG by default).
    public init(byteCount: Int, using random: any RandomSource = SystemRandomSource()) {
        storage = SecureBytes(count: byteCount) { random.fill($0) }
    }

    /// The key length in bytes.
    public var byteCount: Int { storage.count }

    /// Calls `body` with the key bytes. Do not let the pointer escape.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try storage.withUnsafeBytes(body)
    }

    /// Constant-time comparison of key bytes.
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        lhs.storage.constantTimeEquals(rhs.storage)
    }

    /// A redacted description: the length only.
    public var description: String { "SymmetricKey(\(byteCount) bytes, redacted)" }
    /// A redacted description: the length only.
    public var debugDescription: String { description }
}
