/// A fixed heap buffer for caller-buffer calls and the floor's C calls (allocated once).
final class RawBytes {
    let mutable: UnsafeMutableRawBufferPointer

    init(count: Int) {
        mutable = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        mutable.initializeMemory(as: UInt8.self, repeating: 0)
    }

    convenience init(_ bytes: [UInt8]) {
        self.init(count: bytes.count)
        mutable.copyBytes(from: bytes)
    }

    deinit { mutable.deallocate() }

    var count: Int { mutable.count }
    var readable: UnsafeRawBufferPointer { UnsafeRawBufferPointer(mutable) }
    var array: [UInt8] { Array(mutable) }
}

/// An empty buffer with a valid base address (for empty AAD).
nonisolated(unsafe) let emptyBytes = UnsafeRawBufferPointer(start: emptyPlaceholder, count: 0)
