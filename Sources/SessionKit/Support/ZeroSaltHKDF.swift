import SignalPrimitives

/// HKDF with the fixed salt ZERO32 (X3DH, MSGKEYS, Sender Keys, self-encryption): the salt's
/// HMAC key schedule is computed once per process and copied for every derivation.
enum ZeroSaltHKDF {
    /// The extractor keyed with 32 zero bytes.
    static let extractor = HKDF.Extractor(salt: [UInt8](repeating: 0, count: 32))
}

extension UnsafeMutableRawBufferPointer {
    /// The sub-buffer `range` as a buffer of its own.
    @inlinable
    func slice(_ range: Range<Int>) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: self[range])
    }
}

extension UnsafeRawBufferPointer {
    /// The sub-buffer `range` as a buffer of its own.
    @inlinable
    func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self[range])
    }
}
