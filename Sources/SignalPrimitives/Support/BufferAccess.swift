/// One readable zero byte that stands in for the base address of an empty buffer:
/// libsodium's prototypes take non-null pointers even when the length is 0.
@usableFromInline
nonisolated(unsafe) let emptyBufferPlaceholder: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
    pointer.initialize(repeating: 0, count: 16)
    return pointer
}()

extension UnsafeRawBufferPointer {
    /// The bytes as a non-null `UInt8` pointer (a placeholder for an empty buffer).
    @inlinable var u8: UnsafePointer<UInt8> {
        baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(emptyBufferPlaceholder)
    }
}

extension UnsafeMutableRawBufferPointer {
    /// The bytes as a non-null `UInt8` pointer (a placeholder for an empty buffer).
    @inlinable var u8: UnsafeMutablePointer<UInt8> {
        baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyBufferPlaceholder
    }
}

/// Byte arrays: safe access to their bytes with typed throws.
extension Array where Element == UInt8 {
    /// `withUnsafeBytes` with a typed error, so typed throws survive nested buffer access.
    @inlinable
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }
        return try result.get()
    }

    /// `init(unsafeUninitializedCapacity:initializingWith:)` with a typed error: `body` fills
    /// the new storage (`count` bytes, uninitialised) and returns how many bytes from the start
    /// it initialised. When `body` throws, the bytes are discarded and the error rethrown (wipe
    /// anything secret before throwing).
    @inlinable
    public init<E: Error>(
        uninitializedCount count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) {
        var failure: E?
        self.init(unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(E) {
                initialized = try body(UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// `withUnsafeMutableBytes` with a typed error.
    @inlinable
    public mutating func withMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeMutableBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }
        return try result.get()
    }
}

/// Byte slices: safe access to their bytes with typed throws.
extension ArraySlice where Element == UInt8 {
    /// `withUnsafeBytes` with a typed error, so typed throws survive nested buffer access.
    @inlinable
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }
        return try result.get()
    }
}
