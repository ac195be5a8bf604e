import SignalPrimitives

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps a typed error through the closure.
    @inlinable
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }
        return try result.get()
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeMutableBytes` that keeps a typed error through the closure.
    @inlinable
    mutating func withMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeMutableBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }
        return try result.get()
    }
}

extension ArraySlice where Element == UInt8 {
    /// `withUnsafeBytes` that keeps a typed error through the closure.
    @inlinable
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }
        return try result.get()
    }
}

/// A zeroed temporary buffer of `count` bytes for short-lived secrets (on the stack when
/// small); it is wiped before it is released, also when `body` throws.
@inlinable
func withSecretScratch<R, E: Error>(
    _ count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
) throws(E) -> R {
    let result: Result<R, E> = withUnsafeTemporaryAllocation(byteCount: count, alignment: 16) { buffer in
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        defer { SecureMemory.zero(buffer) }
        return Result { () throws(E) -> R in try body(buffer) }
    }
    return try result.get()
}
