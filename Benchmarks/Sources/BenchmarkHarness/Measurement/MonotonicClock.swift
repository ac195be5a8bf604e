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

    /// Nanoseconds on this clock since an arbitrary fixed point.
    @inline(__always)
    public func now() -> UInt64 {
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
