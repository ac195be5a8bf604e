import CHeapInfo

/// The number of heap bytes the allocator currently has handed out (glibc `mallinfo2`:
/// in-use small blocks plus mmapped blocks; Darwin: the default zone's bytes in use).
public enum HeapProbe {
    /// Bytes currently allocated from the heap by this process.
    public static func bytesInUse() -> Int {
        #if canImport(Darwin)
        var statistics = malloc_statistics_t()
        malloc_zone_statistics(nil, &statistics)
        return Int(statistics.size_in_use)
        #else
        let info = mallinfo2()
        return Int(info.uordblks) + Int(info.hblkhd)
        #endif
    }
}
