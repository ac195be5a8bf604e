import SignalPrimitives

/// A sending or receiving chain key CK (SPEC §4), advanced by KDF_CK once per message.
struct ChainKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Length of a chain key.
    static let byteCount = ChainKeyDerivation.byteCount
    /// The 32 secret bytes.
    let storage: SecureBytes

    /// Wraps 32 secret bytes.
    init(storage: SecureBytes) { self.storage = storage }

    /// KDF_CK: writes mk = HMAC(ck, 0x01) into `messageKey` (32 bytes) and returns
    /// ck' = HMAC(ck, 0x02) (`ChainKeyDerivation`).
    func advance(writingMessageKeyInto messageKey: UnsafeMutableRawBufferPointer) -> ChainKey {
        ChainKey(storage: ChainKeyDerivation.advance(storage, writingMessageKeyInto: messageKey))
    }

    /// KDF_CK returning mk in zeroing storage (for keys that are stored as skipped).
    func advance() -> (chainKey: ChainKey, messageKey: MessageKey) {
        let (next, messageKey) = ChainKeyDerivation.advance(storage)
        return (ChainKey(storage: next), MessageKey(storage: messageKey))
    }

    /// A redacted description.
    var description: String { "ChainKey(redacted)" }
    /// A redacted description.
    var debugDescription: String { description }
}
