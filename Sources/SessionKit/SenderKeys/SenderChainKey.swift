import SignalPrimitives

/// A sender-key chain key at one iteration (SPEC §5):
/// `mk = HMAC(ck, 0x01)` is the message key of this iteration, `ck' = HMAC(ck, 0x02)` the
/// chain key of the next one (`ChainKeyDerivation`, the KDF_CK of the Double Ratchet).
struct SenderChainKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The length of a chain key and of a message key.
    static let byteCount = ChainKeyDerivation.byteCount
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
        let (nextKey, messageKey) = ChainKeyDerivation.advance(key)
        return (messageKey, SenderChainKey(iteration: iteration + 1, key: nextKey))
    }

    /// The chain key at `target` (≥ this iteration), without the message keys in between.
    func advanced(to target: UInt64) -> SenderChainKey {
        var current = self
        while current.iteration < target { current = current.step().next }
        return current
    }

    /// A redacted description: the iteration only.
    var description: String { "SenderChainKey(iteration: \(iteration), key redacted)" }
    /// A redacted description: the iteration only.
    var debugDescription: String { description }
}
