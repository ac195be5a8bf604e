import SignalPrimitives

/// The receiving chain of the current remote ratchet key DHr (SPEC §4): CKr and Nr.
struct ReceiverChain: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// CKr.
    var chainKey: ChainKey
    /// Nr: the number of the next message expected in this chain (at most 2^32).
    var counter: UInt64

    /// `skip(until)` of SPEC §4 on the receiving chain of `ratchetKey` (`chain` is `nil` when
    /// there is none yet, Nr then being 0): first `tooManySkippedMessages` when
    /// Nr + maxSkip < until, checked even without a chain; then, while Nr < until, the message
    /// key of Nr is appended to `pending` under (ratchetKey, Nr) and the chain advances.
    /// - Throws: `SessionError.tooManySkippedMessages`.
    static func skip(
        _ chain: inout ReceiverChain?, of ratchetKey: X25519.PublicKey?, until: UInt32, maxSkip: Int,
        into pending: inout [(slot: SkippedMessageKeys.Slot, messageKey: MessageKey)]
    ) throws(SessionError) {
        let counter = chain?.counter ?? 0
        guard counter + UInt64(max(maxSkip, 0)) >= UInt64(until) else { throw .tooManySkippedMessages }
        guard var current = chain, let ratchetKey, current.counter < UInt64(until) else { return }
        while current.counter < UInt64(until) {
            let (next, messageKey) = current.chainKey.advance()
            pending.append((SkippedMessageKeys.Slot(ratchetKey: ratchetKey, counter: UInt32(truncatingIfNeeded: current.counter)), messageKey))
            current.chainKey = next
            current.counter += 1
        }
        chain = current
    }

    /// A redacted description: Nr only.
    var description: String { "ReceiverChain(Nr: \(counter), key redacted)" }
    /// A redacted description: Nr only.
    var debugDescription: String { description }
}
