/// A wall-clock instant: whole seconds since the Unix epoch (1970-01-01T00:00:00Z).
///
/// Prekey rotation and expiry are decided against a `Timestamp` the caller passes in (from a
/// `WallClock`), never read implicitly, so tests drive time with a fake clock. Arithmetic
/// saturates at the ends of `Int64`, so no timestamp, however absurd, traps.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds since the Unix epoch (negative before it).
    public let secondsSince1970: Int64

    /// The instant `secondsSince1970` seconds after the epoch.
    public init(secondsSince1970: Int64) {
        self.secondsSince1970 = secondsSince1970
    }

    /// The instant `seconds` later (earlier when negative), saturating at `Int64`'s bounds.
    public func adding(seconds: Int64) -> Timestamp {
        let (sum, overflow) = secondsSince1970.addingReportingOverflow(seconds)
        guard overflow else { return Timestamp(secondsSince1970: sum) }
        return Timestamp(secondsSince1970: seconds > 0 ? .max : .min)
    }

    /// The seconds from `earlier` to `self`, saturating at `Int64`'s bounds.
    public func seconds(since earlier: Timestamp) -> Int64 {
        let (difference, overflow) = secondsSince1970.subtractingReportingOverflow(earlier.secondsSince1970)
        guard overflow else { return difference }
        return earlier.secondsSince1970 < 0 ? .max : .min
    }

    /// Orders instants by time.
    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.secondsSince1970 < b.secondsSince1970 }

    /// `Timestamp(<seconds>)`.
    public var description: String { "Timestamp(\(secondsSince1970))" }
}
