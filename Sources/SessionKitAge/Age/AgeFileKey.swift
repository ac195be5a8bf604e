import SignalPrimitives

/// The 16-byte symmetric key of one age file, in zeroing storage.
///
/// Every recipient stanza wraps the same file key; the header MAC and the payload key are
/// derived from it. Apps meet it only when they implement a recipient or identity type of
/// their own (`AgeRecipient`, `AgeIdentity`). Its description never shows the key.
public struct AgeFileKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The length of a file key in bytes.
    public static let byteCount = 16

    package let storage: SecureBytes

    /// Takes ownership of 16 secret bytes.
    /// - Throws: `AgeError.header` when `bytes` is not 16 bytes long (a stanza that unwraps to
    ///   another length is a malformed header).
    public init(bytes: SecureBytes) throws(AgeError) {
        guard bytes.count == Self.byteCount else {
            throw .header("a file key must be \(Self.byteCount) bytes, not \(bytes.count)")
        }
        storage = bytes
    }

    /// Wraps storage the library has checked to hold 16 bytes.
    package init(unchecked storage: SecureBytes) {
        self.storage = storage
    }

    /// A new random file key from `random` (the system CSPRNG by default).
    public init(using random: any RandomSource = SystemRandomSource()) {
        storage = SecureBytes(count: Self.byteCount) { random.fill($0) }
    }

    /// Calls `body` with the 16 key bytes. Do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try storage.withUnsafeBytes(body)
    }

    /// A redacted description.
    public var description: String { "AgeFileKey(redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
}
