import SignalPrimitives

/// A sender-key chain key at one iteration (SPEC §5):
/// `mk = HMAC(ck, 0x01)` is the message key of this iteration, `ck' = HMAC(ck, 0x02)` the
/// chain key of the next one. The HMAC is keyed once and the keyed state copied for both.
struct SenderChainKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The HMAC input that derives the message key.
    static let messageKeyInput: UInt8 = 0x01
    /// The HMAC input that derives the next chain key.
    static let chainKeyInput: UInt8 = 0x02
    /// The length of a chain key and of a message key.
    static let byteCount = 32
    /// One past the largest iteration (2^32): a chain key here has no message key to give.
    static let endOfChain = UInt64(UInt32.max) + 1

    /// The iteration this key belongs to, 0 ... 2^32 (2^32 only after the last message).
    let iteration: UInt64
    /// The 32-byte chain key.
    let key: SecureBytes

    /// Wraps a chain key at `iteration`.
    init(iteration: UInt64, key: SecureBytes) {
        self.iteration = iteration
        self.key = key
    }

    /// The message key of this iteration and the chain key of the next one.
    func step() -> (messageKey: SecureBytes, next: SenderChainKey) {
        let keyed = key.withUnsafeBytes { HMACSHA256(key: $0) }
        let messageKey = Self.derive(keyed, Self.messageKeyInput)
        let nextKey = Self.derive(keyed, Self.chainKeyInput)
        return (messageKey, SenderChainKey(iteration: iteration + 1, key: nextKey))
    }

    /// The chain key at `target` (≥ this iteration), without the message keys in between.
    func advanced(to target: UInt64) -> SenderChainKey {
        var current = self
        while current.iteration < target { current = current.step().next }
        return current
    }

    private static func derive(_ keyed: HMACSHA256, _ input: UInt8) -> SecureBytes {
        var mac = keyed
        withUnsafeBytes(of: input) { mac.update(bytes: $0) }
        return SecureBytes(count: byteCount) { (out: UnsafeMutableRawBufferPointer) in
            // `out` is exactly 32 bytes, so finalize cannot fail.
            try? mac.finalize(into: out)
        }
    }

    /// A redacted description: the iteration only.
    var description: String { "SenderChainKey(iteration: \(iteration), key redacted)" }
    /// A redacted description: the iteration only.
    var debugDescription: String { description }
}
