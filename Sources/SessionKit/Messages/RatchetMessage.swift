import SignalPrimitives

/// A Double Ratchet message on the wire (SPEC §4):
///
///     header = 0x21 || DHs.pk (32) || u32(PN) || u32(Ns)      (41 bytes)
///     message = header || AES-256-GCM ciphertext || tag (16)
///
/// Decoding checks, in order: the type byte (`unsupportedVersion`), the length (at least
/// 41 + 16 bytes, else `invalidMessage`), then the canonicity of the ratchet key (`invalidKey`).
/// This type only encodes and decodes; decryption is `SessionState`'s job.
@_spi(Testing) public struct RatchetMessage: Sendable, Hashable {
    /// Bytes of the header.
    public static let headerByteCount = 41
    /// Bytes of the authentication tag.
    public static let tagByteCount = AES256GCM.tagByteCount
    /// The shortest valid message: a header and an empty ciphertext's tag.
    public static let minimumByteCount = headerByteCount + tagByteCount

    /// The sender's current ratchet public key (header.dh).
    public let ratchetKey: X25519.PublicKey
    /// The number of messages in the sender's previous sending chain (header.pn).
    public let previousCounter: UInt32
    /// The message's number in its sending chain (header.n).
    public let counter: UInt32
    /// The buffer holding the message (possibly after a prekey prefix).
    let buffer: [UInt8]
    /// Offset of the type byte in `buffer`.
    let start: Int

    /// Decodes a message.
    /// - Throws: `SessionError.invalidMessage` for an empty or short input,
    ///   `SessionError.unsupportedVersion` for a type byte other than 0x21,
    ///   `SessionError.invalidKey` for a non-canonical ratchet key.
    public init(serialized: [UInt8]) throws(SessionError) {
        try self.init(buffer: serialized, start: 0)
    }

    /// Decodes the message that starts at `start` in `buffer` and runs to its end.
    init(buffer: [UInt8], start: Int) throws(SessionError) {
        guard start >= 0, buffer.count > start else { throw .invalidMessage }
        guard buffer[start] == WireType.ratchetMessage else { throw .unsupportedVersion }
        guard buffer.count - start >= Self.minimumByteCount else { throw .invalidMessage }
        let key = Array(buffer[start + 1 ..< start + 33])
        do { ratchetKey = try X25519.PublicKey(canonicalRepresentation: key) } catch { throw .invalidKey }
        previousCounter = buffer.readBigEndianUInt32(at: start + 33)
        counter = buffer.readBigEndianUInt32(at: start + 37)
        self.buffer = buffer
        self.start = start
    }

    /// The message bytes, header first.
    public var serialized: [UInt8] { start == 0 ? buffer : Array(buffer[start...]) }

    /// The 41 header bytes (authenticated as part of the AEAD's associated data).
    public var header: ArraySlice<UInt8> { buffer[start ..< start + Self.headerByteCount] }

    /// Ciphertext || tag.
    public var ciphertext: ArraySlice<UInt8> { buffer[(start + Self.headerByteCount)...] }

    /// Writes `0x21 || ratchetKey || u32(previousCounter) || u32(counter)` into the first 41
    /// bytes of `output` (which the caller sized).
    static func writeHeader(
        ratchetKey: X25519.PublicKey, previousCounter: UInt32, counter: UInt32,
        into output: UnsafeMutableRawBufferPointer
    ) {
        output[0] = WireType.ratchetMessage
        ratchetKey.rawRepresentation.withUnsafeBytes { output.slice(1 ..< 33).copyMemory(from: $0) }
        storeBigEndian(previousCounter, at: 33, in: output)
        storeBigEndian(counter, at: 37, in: output)
    }

    private static func storeBigEndian(_ value: UInt32, at offset: Int, in output: UnsafeMutableRawBufferPointer) {
        output[offset] = UInt8(truncatingIfNeeded: value >> 24)
        output[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        output[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        output[offset + 3] = UInt8(truncatingIfNeeded: value)
    }

    /// Equality of the message bytes.
    public static func == (a: RatchetMessage, b: RatchetMessage) -> Bool {
        a.buffer[a.start...].elementsEqual(b.buffer[b.start...])
    }

    /// Hashes the message bytes.
    public func hash(into hasher: inout Hasher) {
        for byte in buffer[start...] { hasher.combine(byte) }
    }
}
