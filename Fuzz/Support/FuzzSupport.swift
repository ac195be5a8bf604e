// Shared by every harness: the libFuzzer entry points, the input reader, invariant traps and
// seed emission. Each harness file defines `enum Harness` with `run(_:)` and `seeds()`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SessionKit
import SignalPrimitives

/// libFuzzer's per-input entry point: runs the harness on one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    Harness.run(bytes)
    return 0
}

/// libFuzzer's start-up hook. With `FUZZ_EMIT_SEEDS=<dir>` in the environment the harness
/// writes its seed inputs (valid encodings made by the library, plus edge cases) into `<dir>`
/// and exits instead of fuzzing; `Fuzz/run.sh seeds` uses this to build `Fuzz/corpus/`.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>?,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    if let directory = getenv("FUZZ_EMIT_SEEDS") {
        let path = String(cString: directory)
        var written = 0
        for seed in Harness.seeds() {
            let name = Hex.encode(Array(SHA256.hash(seed).prefix(10)))
            guard let file = fopen(path + "/seed-" + name, "wb") else { fail("cannot write seeds into \(path)") }
            _ = seed.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            written += 1
        }
        print("wrote \(written) seeds into \(path)")
        exit(0)
    }
    return 0
}

/// Reports a violated invariant and traps: libFuzzer records the input as a crash (a finding).
func fail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text = "FUZZ INVARIANT VIOLATED (\(file):\(line)): \(message)\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    abort()
}

/// Traps unless `condition` holds.
func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
               file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fail(message(), file: file, line: line) }
}

/// Consumes a fuzz input from the front. Reads past the end give zeros or short arrays, so
/// every input is a valid program for the harness.
struct FuzzInput {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been consumed.
    var isAtEnd: Bool { offset >= bytes.count }

    /// The next byte, or 0 at the end.
    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A big-endian u16 from the next two bytes.
    mutating func u16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    /// A big-endian u32 from the next four bytes.
    mutating func u32() -> UInt32 { UInt32(u16()) << 16 | UInt32(u16()) }

    /// Up to `count` bytes.
    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + max(count, 0))
        defer { offset = end }
        return Array(bytes[min(offset, end) ..< end])
    }

    /// A length-prefixed chunk: a u16 length, then up to that many bytes.
    mutating func chunk() -> [UInt8] { take(Int(u16())) }

    /// Everything not yet consumed.
    mutating func rest() -> [UInt8] { take(bytes.count - offset) }
}

/// Builds a length-prefixed chunk as `FuzzInput.chunk()` reads it (for seeds).
func chunk(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8(truncatingIfNeeded: bytes.count >> 8), UInt8(truncatingIfNeeded: bytes.count)] + bytes
}

/// A deterministic byte string for fixed harness keys (SplitMix64 over `seed`); never a real key.
func fixedBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    var out = [UInt8]()
    out.reserveCapacity(count)
    while out.count < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        for shift in stride(from: 0, to: 64, by: 8) where out.count < count {
            out.append(UInt8(truncatingIfNeeded: z >> UInt64(shift)))
        }
    }
    return out
}

/// A random source that hands out fixed bytes (nonces for seeds and re-encoding checks).
struct FixedRandomSource: RandomSource {
    let bytes: [UInt8]
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in buffer.indices { buffer[index] = index < bytes.count ? bytes[index] : 0 }
    }
}

/// Wraps `body` in the persisted-state envelope (SessionKit's `StateWriter` layout:
/// "SKST" || kind || version || body || first 16 bytes of SHA-256), so that a harness can
/// reach the body parsers behind the checksum.
func envelope(kind: UInt8, version: UInt8, body: [UInt8]) -> [UInt8] {
    let head = Array("SKST".utf8) + [kind, version] + body
    return head + SHA256.hash(head).prefix(16)
}

/// A deterministic random source (SplitMix64) that counts its draws, so a harness can check
/// that a failed decryption drew nothing (SPEC §4). Harnesses are single-threaded.
final class CountingRandomSource: RandomSource, @unchecked Sendable {
    private var state: UInt64
    private(set) var draws = 0

    init(seed: UInt64) { state = seed }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        draws += 1
        for index in 0 ..< buffer.count {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            buffer[index] = UInt8(truncatingIfNeeded: z ^ (z >> 31))
        }
    }
}

/// The common part of the persisted-state harnesses. Input: a mode byte. Even: the rest is
/// the whole blob. Odd: the next byte is the version and the rest the body, wrapped by the
/// harness in a valid envelope of `kind` (so the fuzzer reaches the body parser behind the
/// checksum). Checks that loading fails only with `invalidPayload` or `unsupportedVersion`
/// and that a loaded value serializes back to the same bytes (the formats are canonical);
/// returns the loaded value and its blob for further checks.
func loadState<T>(_ bytes: [UInt8], kind: UInt8, load: ([UInt8]) throws(SessionError) -> T,
                  serialize: (T) -> [UInt8]) -> (T, [UInt8])? {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    let blob = mode & 1 == 0 ? input.rest() : envelope(kind: kind, version: input.byte(), body: input.rest())
    let value: T
    do {
        value = try load(blob)
    } catch {
        invariant(error == .invalidPayload || error == .unsupportedVersion, "load threw \(error)")
        return nil
    }
    invariant(serialize(value) == blob, "a loaded state does not serialize to its bytes")
    return (value, blob)
}

/// Seeds for a persisted-state harness from valid blobs: each whole, and as version + body.
func stateSeeds(_ blobs: [[UInt8]]) -> [[UInt8]] {
    blobs.flatMap { blob in [[0] + blob, [1, blob[5]] + blob[6 ..< (blob.count - 16)]] }
}
