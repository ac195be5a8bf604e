#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes this process has passed to `write(2)`, `pwrite(2)` and their kin since it started:
/// the `wchar` line of Linux's `/proc/self/io`.
///
/// It counts what the process asks the kernel to write, to any file (a database, its WAL, a
/// terminal), whether or not the data reaches a disk then; memory-mapped files (SQLite's `-shm`
/// index) are not counted. Reading it writes nothing. Other platforms have no such counter:
/// `bytesWritten()` is then nil.
public enum ProcessWriteCounter {
    /// Whether the counter can be read on this system.
    public static var isAvailable: Bool { bytesWritten() != nil }

    /// The current count, or nil when `/proc/self/io` cannot be read or has no `wchar` line.
    public static func bytesWritten() -> UInt64? {
        #if os(Linux)
        let fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { buffer -> UInt64? in
            guard let base = buffer.baseAddress else { return nil }
            var filled = 0
            while filled < buffer.count {
                let count = read(fd, base + filled, buffer.count - filled)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                filled += count
            }
            return parseWriteCount(UnsafeBufferPointer(start: base, count: filled))
        }
        #else
        return nil
        #endif
    }

    /// The number after `wchar:` at the start of a line of `text` (the contents of
    /// `/proc/self/io`), or nil when there is none.
    public static func parseWriteCount(_ text: UnsafeBufferPointer<UInt8>) -> UInt64? {
        let key = Array("wchar:".utf8)
        var index = 0
        while index + key.count <= text.count {
            let atLineStart = index == 0 || text[index - 1] == UInt8(ascii: "\n")
            if atLineStart, (0..<key.count).allSatisfy({ text[index + $0] == key[$0] }) {
                var position = index + key.count
                while position < text.count, text[position] == UInt8(ascii: " ") { position += 1 }
                var value: UInt64 = 0
                var digits = 0
                while position < text.count, text[position] >= UInt8(ascii: "0"), text[position] <= UInt8(ascii: "9") {
                    value = value &* 10 &+ UInt64(text[position] - UInt8(ascii: "0"))
                    position += 1
                    digits += 1
                }
                return digits > 0 ? value : nil
            }
            index += 1
        }
        return nil
    }
}
