import Foundation
import SignalPrimitives

/// A deterministic byte stream for reproducible test vectors (never for real keys).
///
/// Block `i` is SHA-256(`"sessionkit-vectors/<seed>/<label>/"` || u64be(i)), the construction
/// of `TestVectors/generator/spec_primitives.Drbg`. Each request for `n` bytes takes the next
/// ⌈n/32⌉ blocks and discards what it does not use, so another implementation reproduces the
/// stream from the sequence of request sizes alone.
public final class DeterministicRandomSource: RandomSource, @unchecked Sendable {
    private let prefix: [UInt8]
    private var counter: UInt64 = 0
    private let lock = NSLock()

    /// A stream for `seed` and a label that separates the streams of different suites.
    public init(seed: UInt64, label: String) {
        prefix = Array("sessionkit-vectors/\(seed)/\(label)/".utf8)
    }

    /// Fills `buffer` with the next bytes of the stream.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        lock.lock()
        defer { lock.unlock() }
        var offset = 0
        while offset < buffer.count {
            var input = prefix
            for shift in stride(from: 56, through: 0, by: -8) { input.append(UInt8(truncatingIfNeeded: counter >> UInt64(shift))) }
            counter += 1
            let block = SHA256.hash(input)
            let take = min(block.count, buffer.count - offset)
            for index in 0..<take { buffer[offset + index] = block[index] }
            offset += take
        }
    }
}
