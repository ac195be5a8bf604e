#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The clock a run measures with.
public enum BenchClock: String, Sendable {
    /// CPU time of the measuring thread (`CLOCK_THREAD_CPUTIME_ID`): time the thread spends
    /// descheduled while other processes run is not counted, which keeps medians usable on a
    /// shared machine. Time in system calls made by the operation (such as `getrandom`) is.
    case threadCPU = "cpu"
    /// Wall-clock time (`CLOCK_MONOTONIC`).
    case wall
    /// Not a clock of time: the bytes the process has written so far
    /// (`ProcessWriteCounter`, `/proc/self/io`'s `wchar`), for the cases whose unit is
    /// `CaseUnit.bytesPerMessage`. A "time" on it is a count of bytes. 0 where the counter
    /// cannot be read (those cases refuse to build there).
    case bytesWritten = "bytes-written"

    /// Nanoseconds on this clock since an arbitrary fixed point (bytes written, for
    /// `bytesWritten`).
    @inline(__always)
    public func now() -> UInt64 {
        if self == .bytesWritten { return ProcessWriteCounter.bytesWritten() ?? 0 }
        var ts = timespec()
        clock_gettime(self == .threadCPU ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// Reads the monotonic wall clock in nanoseconds.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point (`CLOCK_MONOTONIC`).
    @inline(__always)
    public static func now() -> UInt64 { BenchClock.wall.now() }
}
