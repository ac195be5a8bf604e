import SignalPrimitives

/// The encodings an age recipient type of another module needs (SPI `AgeRecipientKit`): the
/// Bech32 of its identity and recipient strings and the canonical unpadded base64 of its stanza
/// arguments, exactly as SessionKitAge's own `X25519` and `scrypt` types use them.
///
/// SessionKitMLKEM's `mlkem768x25519` recipient type is built on it; it is not part of the API
/// an app uses.
@_spi(AgeRecipientKit) public enum AgeRecipientKit {
    /// The Bech32 string of `data` under the human-readable part `hrp`, in the case of `hrp`
    /// (age's Bech32 has no length limit).
    public static func bech32Encode(hrp: String, data: UnsafeRawBufferPointer) -> String {
        var bytes = Array(data)
        defer { SecureMemory.zero(&bytes) }
        return Bech32.encode(hrp: hrp, data: bytes)
    }

    /// Decodes a Bech32 string: its human-readable part exactly as written and its data, in
    /// zeroing storage. `nil` for mixed case, a misplaced separator, a character outside the
    /// set, a wrong checksum or bad padding bits.
    public static func bech32Decode(_ text: String) -> (hrp: String, data: SecureBytes)? {
        Bech32.decode(text)
    }

    /// Unpadded base64 of `bytes` (a stanza argument).
    public static func base64Encode(_ bytes: [UInt8]) -> String {
        AgeBase64.encodeUnpadded(bytes)
    }

    /// Decodes a stanza argument as canonical unpadded base64 (`age.md`); `nil` for anything
    /// else (padding, whitespace, non-zero unused bits, a length of 4k + 1).
    public static func base64DecodeCanonical(_ text: String) -> [UInt8]? {
        AgeBase64.decodeUnpadded(text)
    }
}
