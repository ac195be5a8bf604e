import SignalPrimitives

/// KDF_CK, shared by the Double Ratchet's chain keys (SPEC §4) and the sender-key chains
/// (SPEC §5): `mk = HMAC-SHA256(ck, 0x01)`, `ck' = HMAC-SHA256(ck, 0x02)`.
///
/// The HMAC key schedule of ck is computed once and the keyed state copied for the two
/// outputs; both states are wiped by `finalize`.
enum ChainKeyDerivation {
    /// The HMAC input that derives the message key.
    static let messageKeyInput: UInt8 = 0x01
    /// The HMAC input that derives the next chain key.
    static let chainKeyInput: UInt8 = 0x02
    /// The length of a chain key and of a message key.
    static let byteCount = 32

    /// Writes mk = HMAC(ck, 0x01) into `messageKey` (32 bytes) and returns ck' = HMAC(ck, 0x02)
    /// in zeroing storage.
    @inline(__always)
    static func advance(_ chainKey: SecureBytes, writingMessageKeyInto messageKey: UnsafeMutableRawBufferPointer) -> SecureBytes {
        var keyed = HMACSHA256(key: chainKey)
        var forMessage = keyed
        withUnsafeBytes(of: messageKeyInput) { forMessage.update(bytes: $0) }
        // A 32-byte buffer: finalize cannot fail.
        try? forMessage.finalize(into: messageKey)
        withUnsafeBytes(of: chainKeyInput) { keyed.update(bytes: $0) }
        return SecureBytes(count: byteCount) { (out: UnsafeMutableRawBufferPointer) in
            try? keyed.finalize(into: out)
        }
    }

    /// KDF_CK returning both keys in zeroing storage.
    @inline(__always)
    static func advance(_ chainKey: SecureBytes) -> (chainKey: SecureBytes, messageKey: SecureBytes) {
        var keyed = HMACSHA256(key: chainKey)
        var forMessage = keyed
        withUnsafeBytes(of: messageKeyInput) { forMessage.update(bytes: $0) }
        withUnsafeBytes(of: chainKeyInput) { keyed.update(bytes: $0) }
        // 32-byte buffers: finalize cannot fail.
        let messageKey = SecureBytes(count: byteCount) { (out: UnsafeMutableRawBufferPointer) in
            try? forMessage.finalize(into: out)
        }
        let next = SecureBytes(count: byteCount) { (out: UnsafeMutableRawBufferPointer) in
            try? keyed.finalize(into: out)
        }
        return (next, messageKey)
    }
}
