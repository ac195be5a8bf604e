import Foundation
import SessionKit

/// A wall clock the test sets and advances explicitly (thread-safe).
public final class FakeClock: WallClock, @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var current: Timestamp

    /// A clock showing `start` (by default 2023-11-14 22:13:20 UTC, 1,700,000,000 s).
    public init(_ start: Timestamp = Timestamp(secondsSince1970: 1_700_000_000)) { current = start }

    /// The time the clock shows.
    public func now() -> Timestamp { lock.withLock { current } }

    /// Moves the clock `seconds` forward (backward when negative).
    public func advance(bySeconds seconds: Int64) { lock.withLock { current = current.adding(seconds: seconds) } }

    /// Sets the clock to `time`.
    public func set(_ time: Timestamp) { lock.withLock { current = time } }
}
