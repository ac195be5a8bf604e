import CSodium

/// An immutable heap buffer for secret bytes, zeroed with `sodium_memzero` when released.
///
/// Keys and other secrets in this library live in `SecureBytes`, never in `[UInt8]`, so their
/// storage is wiped when the last reference goes. The contents never change after
/// initialisation, which makes sharing across tasks safe. `description` never shows the bytes.
public final class SecureBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    @usableFromInline let pointer: UnsafeMutableRawPointer
    /// The number of bytes held.
    public let count: Int
    /// Test hook: called by `deinit` with the whole allocation after it was wiped and before it
    /// is freed, so tests can check the wipe without reading freed memory. `nil` in the library.
    let releaseObserver: (@Sendable (UnsafeRawBufferPointer) -> Void)?

    /// Allocates `count` bytes and lets `initializer` fill them once.
    /// If `initializer` throws, the buffer is zeroed and released and the error is rethrown.
    public convenience init<E: Error>(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        try self.init(count: count, releaseObserver: nil, initializer: initializer)
    }

    /// `init(count:initializer:)` with a test hook that sees the wiped allocation on release.
    init<E: Error>(count: Int, releaseObserver: (@Sendable (UnsafeRawBufferPointer) -> Void)?,
                   initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        let size = max(count, 0)
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: max(size, 1))
        self.count = size
        self.releaseObserver = releaseObserver
        try initializer(UnsafeMutableRawBufferPointer(start: pointer, count: size))
    }

    /// Copies `bytes` into secure storage.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { (buffer: UnsafeMutableRawBufferPointer) in
            if let base = bytes.baseAddress, bytes.count > 0 {
                buffer.baseAddress?.copyMemory(from: base, byteCount: bytes.count)
            }
        }
    }

    /// Copies `bytes` into secure storage. The caller should wipe its own copy.
    public convenience init(copying bytes: [UInt8]) {
        self.init(count: bytes.count) { (buffer: UnsafeMutableRawBufferPointer) in
            buffer.copyBytes(from: bytes)
        }
    }

    deinit {
        sodium_memzero(pointer, max(count, 1))
        releaseObserver?(UnsafeRawBufferPointer(start: pointer, count: max(count, 1)))
        pointer.deallocate()
    }

    /// Calls `body` with a read-only view of the secret bytes. Do not let the pointer escape.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A copy of the secret bytes as an array. The array is not wiped on release; prefer
    /// `withUnsafeBytes` and wipe the copy with `SecureMemory.zero(_:)` when done.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Constant-time equality of contents (`sodium_memcmp`); different lengths are unequal.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        withUnsafeBytes { a in other.withUnsafeBytes { b in ConstantTime.equals(a, b) } }
    }

    /// A redacted description: the length only.
    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    /// A redacted description: the length only.
    public var debugDescription: String { description }
}
