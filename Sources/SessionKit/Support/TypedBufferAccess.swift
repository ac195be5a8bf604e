/// `Array.withUnsafeBytes` and `withUnsafeMutableBytes` are `rethrows`, which erases typed
/// errors; these wrappers keep them, so nested buffer access can throw `SessionError`.
enum TypedBufferAccess {
    /// Calls `body` with a read-only view of `array`'s bytes.
    static func withBytes<R, E: Error>(
        _ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let result: Result<R, E> = array.withUnsafeBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }
        return try result.get()
    }

    /// Calls `body` with a mutable view of `array`'s bytes.
    static func withMutableBytes<R, E: Error>(
        _ array: inout [UInt8], _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let result: Result<R, E> = array.withUnsafeMutableBytes { buffer in
            Result { () throws(E) -> R in try body(buffer) }
        }
        return try result.get()
    }
}
