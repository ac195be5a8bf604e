/// One readable byte standing in for the base address of an empty buffer (C prototypes take
/// non-null pointers even for zero lengths).
nonisolated(unsafe) let emptyPlaceholder: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
    pointer.initialize(repeating: 0, count: 16)
    return pointer
}()

extension UnsafeRawBufferPointer {
    /// The bytes as a non-null `UInt8` pointer.
    @inline(__always) var u8: UnsafePointer<UInt8> {
        baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(emptyPlaceholder)
    }
}

extension UnsafeMutableRawBufferPointer {
    /// The bytes as a non-null `UInt8` pointer.
    @inline(__always) var u8: UnsafeMutablePointer<UInt8> {
        baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPlaceholder
    }
}
