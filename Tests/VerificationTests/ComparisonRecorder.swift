#if os(Linux)
import Foundation
import Glibc
import SignalPrimitives

/// Observes libsodium's constant-time comparison, `sodium_memcmp`, from inside the test
/// executable.
///
/// The library's Swift modules are linked statically into the test executable, so their
/// calls to `sodium_memcmp` bind to this definition rather than to libsodium's; it records the
/// call and forwards to libsodium's own function (found with `dlsym(RTLD_NEXT, …)`). Tests use
/// it to check behaviour: that comparing a MAC, a key or a fingerprint runs libsodium's
/// comparison over the whole length (which takes time independent of where the inputs
/// differ) instead of an early-exit `==`. Outside `ComparisonRecorder.recording` it only
/// forwards.
enum ComparisonRecorder {
    /// One observed comparison: how many bytes, and whether they were equal.
    struct Comparison: Equatable {
        let length: Int
        let equal: Bool
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var active = false
    nonisolated(unsafe) private static var observed: [Comparison] = []

    typealias MemcmpFunction = @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int) -> CInt
    /// libsodium's `sodium_memcmp`.
    static let libsodiumMemcmp: MemcmpFunction? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: -1), "sodium_memcmp") else { return nil }
        return unsafeBitCast(symbol, to: MemcmpFunction.self)
    }()

    /// Whether the library's comparisons reach this recorder (they do when it is linked into
    /// the same executable, as with SwiftPM on Linux).
    static var isInterposed: Bool {
        let probe: [UInt8] = [1, 2, 3]
        let seen = recording { _ = SecureBytes(copying: probe).constantTimeEquals(SecureBytes(copying: probe)) }
        return seen == [Comparison(length: 3, equal: true)]
    }

    /// Runs `body` and returns the comparisons it made, in order.
    static func recording(_ body: () throws -> Void) rethrows -> [Comparison] {
        lock.lock()
        active = true
        observed = []
        lock.unlock()
        defer {
            lock.lock()
            active = false
            lock.unlock()
        }
        try body()
        lock.lock()
        defer { lock.unlock() }
        return observed
    }

    static func record(_ comparison: Comparison) {
        lock.lock()
        if active { observed.append(comparison) }
        lock.unlock()
    }
}

/// The interposed `sodium_memcmp` (same C signature as libsodium's).
@_cdecl("sodium_memcmp")
func interposedSodiumMemcmp(_ first: UnsafeRawPointer?, _ second: UnsafeRawPointer?, _ length: Int) -> CInt {
    guard let forward = ComparisonRecorder.libsodiumMemcmp else { return -1 }
    let result = forward(first, second, length)
    ComparisonRecorder.record(.init(length: length, equal: result == 0))
    return result
}
#endif
