import SignalPrimitives

/// A sending or receiving chain key CK (SPEC §4), advanced by KDF_CK once per message.
struct ChainKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Length of a chain key.
    static let byteCount = 32
    /// The 32 secret bytes.
    let storage: SecureBytes

    /// Wraps 32 secret bytes.
    init(storage: SecureBytes) { self.storage = storage }

    /// KDF_CK: writes mk = HMAC(ck, 0x01) into `messageKey` (32 bytes) and returns
    /// ck' = HMAC(ck, 0x02). The HMAC key schedule of ck is computed once for both outputs.
    func advance(writingMessageKeyInto messageKey: UnsafeMutableRawBufferPointer) -> ChainKey {
        var keyed = storage.withUnsafeBytes { HMACSHA256(key: $0) }
        var forMessage = keyed
        withUnsafeBytes(of: UInt8(0x01)) { forMessage.update(bytes: $0) }
        // A 32-byte buffer: finalize cannot fail.
        try? forMessage.finalize(into: messageKey)
        withUnsafeBytes(of: UInt8(0x02)) { keyed.update(bytes: $0) }
        let next = SecureBytes(count: Self.byteCount) { (out: UnsafeMutableRawBufferPointer) in
            try? keyed.finalize(into: out)
        }
        return ChainKey(storage: next)
    }

    /// KDF_CK returning mk in zeroing storage (for keys that are stored as skipped).
    func advance() -> (chainKey: ChainKey, messageKey: MessageKey) {
        var next: ChainKey?
        let mk = SecureBytes(count: MessageKey.byteCount) { (out: UnsafeMutableRawBufferPointer) in
            next = advance(writingMessageKeyInto: out)
        }
        return (next ?? self, MessageKey(storage: mk))
    }

    /// A redacted description.
    var description: String { "ChainKey(redacted)" }
    /// A redacted description.
    var debugDescription: String { description }
}
