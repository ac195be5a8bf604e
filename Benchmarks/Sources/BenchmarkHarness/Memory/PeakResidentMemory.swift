#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CHeapInfo

/// The peak resident memory an operation adds to the process (Linux).
///
/// Before the operation the allocator returns its free pages to the kernel (`malloc_trim(0)`,
/// so that memory freed by earlier work and still resident cannot be reused unseen), the
/// kernel's high-water mark of the resident set is reset to the current resident set (`5`
/// written to `/proc/self/clear_refs`, Linux 4.0 and later), and `VmRSS` is read: the baseline.
/// After the operation `VmHWM` is the peak of the resident set during it; the figure is the
/// peak minus the baseline. Resident memory counts the pages the process touched (heap, stacks,
/// mapped files), not the kernel's page cache for the files it reads and writes.
public enum PeakResidentMemory {
    /// A figure that cannot be measured here.
    public struct Unavailable: Error, CustomStringConvertible {
        /// Why.
        public let description: String
    }

    /// Runs `operation` once and returns the peak resident bytes it added over the baseline.
    /// - Throws: `Unavailable` where `/proc/self/status` or `/proc/self/clear_refs` cannot be
    ///   used (not Linux, or a kernel without the reset); what `operation` throws.
    public static func measure(_ operation: () throws -> Void) throws -> UInt64 {
        #if os(Linux)
        _ = malloc_trim(0)
        try resetPeak()
        let baseline = try statusKilobytes("VmRSS")
        try operation()
        let peak = try statusKilobytes("VmHWM")
        return peak > baseline ? (peak - baseline) * 1024 : 0
        #else
        throw Unavailable(description: "peak resident memory is measured on Linux only (/proc/self/status VmHWM)")
        #endif
    }

    /// Resets the process's resident-set high-water mark (`VmHWM`) to its current resident set.
    static func resetPeak() throws {
        let fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Unavailable(description: "cannot open /proc/self/clear_refs (errno \(errno))") }
        defer { close(fd) }
        let written = write(fd, "5", 1)
        guard written == 1 else { throw Unavailable(description: "cannot reset VmHWM through /proc/self/clear_refs (errno \(errno))") }
    }

    /// A `kB` field of `/proc/self/status` (`VmRSS`, `VmHWM`), in kibibytes.
    static func statusKilobytes(_ field: String) throws -> UInt64 {
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Unavailable(description: "cannot read /proc/self/status") }
        defer { _ = close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0 ..< count]
        }
        let status = String(decoding: bytes, as: UTF8.self)
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter { $0.isNumber }
            if let value = UInt64(String(digits)) { return value }
        }
        throw Unavailable(description: "no \(field) in /proc/self/status")
    }
}
