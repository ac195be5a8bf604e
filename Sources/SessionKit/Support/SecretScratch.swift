import SignalPrimitives

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
