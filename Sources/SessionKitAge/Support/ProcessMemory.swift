#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
import os
#endif

/// How much memory one large scratch allocation (scrypt's) may take in this process, as far as
/// the system says: the smallest of
/// - half the physical memory (the rest is left to the app and the system),
/// - on Linux, `MemAvailable` of `/proc/meminfo` (what can be allocated without swapping) and
///   the room left under the process's cgroup memory limit (v2 `memory.max` − `memory.current`,
///   or v1 `memory.limit_in_bytes` − `memory.usage_in_bytes`), when there is one,
/// - on iOS, tvOS, watchOS and visionOS, `os_proc_available_memory()` (the room left before
///   the system ends the app), when it answers.
///
/// `nil` when none of these is known (the caller then does not check).
enum ProcessMemory {
    static func availableByteCount() -> UInt64? {
        var bound: UInt64?
        func lower(_ value: UInt64?) {
            guard let value else { return }
            bound = min(bound ?? value, value)
        }
        lower(physicalByteCount().map { $0 / 2 })
        #if os(Linux)
        lower(linuxMemAvailable())
        lower(linuxCgroupRoom())
        #endif
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        let room = os_proc_available_memory()
        if room > 0 { lower(UInt64(room)) }
        #endif
        return bound
    }

    /// The physical memory, from `sysconf`.
    static func physicalByteCount() -> UInt64? {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, pageSize > 0 else { return nil }
        let (bytes, overflow) = UInt64(pages).multipliedReportingOverflow(by: UInt64(pageSize))
        return overflow ? UInt64.max : bytes
    }

    #if os(Linux)
    /// `MemAvailable` of `/proc/meminfo`, in bytes.
    static func linuxMemAvailable() -> UInt64? {
        guard let text = readSmallFile("/proc/meminfo") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
            // "MemAvailable:   12345678 kB"
            let fields = line.split(separator: " ")
            guard fields.count >= 2, let kibibytes = UInt64(fields[1]) else { return nil }
            let (bytes, overflow) = kibibytes.multipliedReportingOverflow(by: 1024)
            return overflow ? UInt64.max : bytes
        }
        return nil
    }

    /// The room under the memory limit of this process's cgroup (its own group's limit, not
    /// its parents'), or `nil` without a limit.
    static func linuxCgroupRoom() -> UInt64? {
        // /proc/self/cgroup: "0::/path" for cgroup v2, "N:…memory…:/path" for v1's memory
        // controller. Inside a container's cgroup namespace the path is "/" (the group is the
        // mount's root); the group's folder is tried first, then the mount's root.
        var v2: [String] = [], v1: [String] = []
        if let membership = readSmallFile("/proc/self/cgroup") {
            for line in membership.split(separator: "\n") {
                let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
                guard fields.count == 3 else { continue }
                let path = fields[2] == "/" ? "" : String(fields[2])
                if fields[0] == "0", fields[1].isEmpty { v2.append("/sys/fs/cgroup" + path) }
                if fields[1].split(separator: ",").contains("memory") { v1.append("/sys/fs/cgroup/memory" + path) }
            }
        }
        for folder in v2 + ["/sys/fs/cgroup"] {
            guard let limit = readNumber(folder + "/memory.max") else { continue }
            let used = readNumber(folder + "/memory.current") ?? 0
            return limit > used ? limit - used : 0
        }
        for folder in v1 + ["/sys/fs/cgroup/memory"] {
            guard let limit = readNumber(folder + "/memory.limit_in_bytes") else { continue }
            // An unlimited v1 group reports a number near 2^63.
            guard limit < 1 << 62 else { return nil }
            let used = readNumber(folder + "/memory.usage_in_bytes") ?? 0
            return limit > used ? limit - used : 0
        }
        return nil
    }

    /// The decimal number a cgroup file holds (`nil` for "max", a missing file or other text).
    static func readNumber(_ path: String) -> UInt64? {
        guard let text = readSmallFile(path) else { return nil }
        return UInt64(text.trimmingWhitespace())
    }

    /// The first 64 KiB of a file, as text (`/proc` files report no length: read to the end).
    static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 16 {
            let n = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return read(descriptor, base, raw.count)
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += buffer[0 ..< n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    #endif
}

#if os(Linux)
extension String {
    /// The string without leading and trailing spaces, tabs and line feeds.
    fileprivate func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
#endif
