#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A source of the current wall-clock time, injected wherever SessionKit needs the time
/// (prekey rotation and expiry), so that tests can drive time explicitly.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Timestamp
}

/// The operating system's real-time clock (`clock_gettime(CLOCK_REALTIME)`), the default.
public struct SystemWallClock: WallClock {
    /// Creates the system clock.
    public init() {}

    /// The current time, in whole seconds since the epoch (the epoch itself if the clock
    /// cannot be read).
    public func now() -> Timestamp {
        var time = timespec()
        guard clock_gettime(CLOCK_REALTIME, &time) == 0 else { return Timestamp(secondsSince1970: 0) }
        return Timestamp(secondsSince1970: Int64(time.tv_sec))
    }
}
