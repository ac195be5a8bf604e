import SignalPrimitives

/// The iterated hash of SPEC §7 (libsignal's `Fingerprint::get_fingerprint`):
///
///     H_0 = SHA-512(0x00 0x00 || K || ID || K)
///     H_i = SHA-512(H_(i-1) || K)    for i = 1 ..< iterations
///
/// and the digit encoding of one party's half. The loop keeps `H || K` in one buffer that is
/// allocated once per call: every round hashes the whole buffer in one libsodium call and
/// writes the digest back over its first 64 bytes (libsodium absorbs the whole input before it
/// writes the digest), so an iteration costs one SHA-512 and nothing else (no allocation, no
/// copy of K or of a hash state).
enum FingerprintHash {
    /// The number of digest bytes kept: the scannable content is `H[0..<32]`, and the digits
    /// read `H[0..<30]`.
    static let keptByteCount = 32

    /// `H[0..<32]` after `iterations` rounds over `key` and `identifier`.
    /// The caller has checked `1 < iterations ≤ 1_000_000`.
    static func compute(iterations: Int, identifier: [UInt8], key: [UInt8]) -> [UInt8] {
        let digestCount = SHA512.byteCount
        var buffer = [UInt8](repeating: 0, count: digestCount + key.count)
        buffer.replaceSubrange(digestCount..., with: key)

        buffer.withUnsafeMutableBytes { raw in
            let digest = UnsafeMutableRawBufferPointer(rebasing: raw[0 ..< digestCount])
            let chained = UnsafeRawBufferPointer(raw)
            let keyBytes = UnsafeRawBufferPointer(rebasing: chained[digestCount...])

            var state = SHA512()
            withUnsafeBytes(of: UInt16(0)) { state.update(bytes: $0) } // fingerprint format 0x0000
            state.update(bytes: keyBytes)
            identifier.withUnsafeBytes { state.update(bytes: $0) }
            state.update(bytes: keyBytes)
            finalize(&state, into: digest)

            var round = 1
            while round < iterations {
                // Absorbing H || K completes before the digest overwrites H.
                hash(chained, into: digest)
                round += 1
            }
        }
        return Array(buffer[0 ..< keptByteCount])
    }

    /// SHA-512 of `input` into the 64-byte `digest` buffer (which may overlap `input`: the
    /// one-shot hash absorbs all of it before writing). `hash(bytes:into:)` only throws for a
    /// buffer shorter than 64 bytes, which `compute` never passes; should it ever throw, the
    /// incremental form gives the same digest.
    @inline(__always)
    private static func hash(_ input: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) {
        do {
            try SHA512.hash(bytes: input, into: digest)
        } catch {
            var state = SHA512()
            state.update(bytes: input)
            finalize(&state, into: digest)
        }
    }

    /// Writes the digest into the 64-byte `digest` buffer. `finalize(into:)` only throws for a
    /// buffer shorter than 64 bytes, which `compute` never passes; should it ever throw, the
    /// allocating `finalize()` gives the same digest (the state is untouched by the failed call).
    @inline(__always)
    private static func finalize(_ state: inout SHA512, into digest: UnsafeMutableRawBufferPointer) {
        do {
            try state.finalize(into: digest)
        } catch {
            let bytes = state.finalize()
            digest.copyBytes(from: bytes.prefix(digest.count))
        }
    }

    /// The 30 ASCII digits of one party's half: each of the six 5-byte big-endian chunks of
    /// `hash[0..<30]`, modulo 100000, as five zero-padded decimal digits.
    static func digits(_ hash: [UInt8]) -> String {
        var text = [UInt8](repeating: UInt8(ascii: "0"), count: 30)
        for chunk in 0 ..< 6 {
            var value: UInt64 = 0
            for byte in hash[(chunk * 5) ..< (chunk * 5 + 5)] {
                value = value << 8 | UInt64(byte)
            }
            value %= 100_000
            for position in stride(from: chunk * 5 + 4, through: chunk * 5, by: -1) {
                text[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
