import CSodium

/// HMAC-SHA256 (RFC 2104) on libsodium's `crypto_auth_hmacsha256` state.
///
/// The type is a value: copying a keyed instance copies the keyed inner and outer hash
/// states, so a key can be absorbed once and reused for many messages without re-keying
/// (the ratchet's chain-key steps rely on this). `finalize` wipes the state.
public struct HMACSHA256: Sendable {
    /// The tag length in bytes.
    public static let byteCount = 32
    @usableFromInline var state = crypto_auth_hmacsha256_state()

    /// Keys a new HMAC with `key` (any length; RFC 2104 hashes keys longer than 64 bytes).
    @inlinable
    public init(key: UnsafeRawBufferPointer) {
        _ = Sodium.isInitialized
        crypto_auth_hmacsha256_init(&state, key.u8, key.count)
    }

    /// Keys a new HMAC with `key`. The state is keyed in place: no copy of it is made.
    public init(key: [UInt8]) {
        _ = Sodium.isInitialized
        key.withUnsafeBytes { k in _ = crypto_auth_hmacsha256_init(&state, k.u8, k.count) }
    }

    /// Keys a new HMAC with a symmetric key, in place.
    public init(key: SymmetricKey) {
        self.init(key: key.storage)
    }

    /// Keys a new HMAC with secret bytes, in place (no copy of the keyed state is made, so
    /// finalizing or `wipe()` leaves none behind).
    @inlinable
    public init(key: SecureBytes) {
        _ = Sodium.isInitialized
        key.withUnsafeBytes { k in _ = crypto_auth_hmacsha256_init(&state, k.u8, k.count) }
    }

    /// Absorbs `data`.
    @inlinable
    public mutating func update(bytes data: UnsafeRawBufferPointer) {
        crypto_auth_hmacsha256_update(&state, data.u8, UInt64(data.count))
    }

    /// Absorbs `data`.
    public mutating func update(_ data: [UInt8]) { data.withUnsafeBytes { update(bytes: $0) } }

    /// Writes the 32-byte tag into the first 32 bytes of `output` and wipes the state.
    /// - Throws: `CryptoError.bufferTooSmall` when `output` is shorter than 32 bytes.
    @inlinable
    public mutating func finalize(into output: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard output.count >= Self.byteCount, let base = output.baseAddress else {
            throw .bufferTooSmall(required: Self.byteCount, actual: output.count)
        }
        crypto_auth_hmacsha256_final(&state, base.assumingMemoryBound(to: UInt8.self))
        withUnsafeMutableBytes(of: &state) { SecureMemory.zero($0) }
    }

    /// Returns the 32-byte tag and wipes the state.
    @inlinable
    public mutating func finalize() -> [UInt8] {
        var tag = ByteArrays.zeroed32()
        tag.withUnsafeMutableBytes { _ = crypto_auth_hmacsha256_final(&state, $0.u8) }
        withUnsafeMutableBytes(of: &state) { SecureMemory.zero($0) }
        return tag
    }

    /// The HMAC-SHA256 tag of `message` under `key`.
    @inlinable
    public static func authenticationCode(for message: [UInt8], using key: [UInt8]) -> [UInt8] {
        _ = Sodium.isInitialized
        // One state on the stack, the keyed state wiped after use.
        var state = crypto_auth_hmacsha256_state()
        var tag = ByteArrays.zeroed32()
        key.withUnsafeBytes { k in _ = crypto_auth_hmacsha256_init(&state, k.u8, k.count) }
        message.withUnsafeBytes { m in _ = crypto_auth_hmacsha256_update(&state, m.u8, UInt64(m.count)) }
        tag.withUnsafeMutableBytes { _ = crypto_auth_hmacsha256_final(&state, $0.u8) }
        withUnsafeMutableBytes(of: &state) { SecureMemory.zero($0) }
        return tag
    }

    /// Whether `tag` is the full 32-byte HMAC-SHA256 of `message` under `key`, compared in
    /// constant time. A tag of any other length is invalid (use
    /// `isValidAuthenticationCode(_:for:using:truncatedTo:)` for truncated tags).
    public static func isValidAuthenticationCode(_ tag: [UInt8], for message: [UInt8], using key: [UInt8]) -> Bool {
        isValidAuthenticationCode(tag, for: message, using: key, truncatedTo: byteCount)
    }

    /// Whether `tag` is the HMAC-SHA256 of `message` under `key` truncated to `byteCount` bytes
    /// (1 … 32), compared in constant time. A tag whose length is not exactly `byteCount` is
    /// invalid, so a caller cannot be tricked into checking a shorter prefix than it meant to.
    /// Truncations below 16 bytes make forgeries cheap; use them only where a format demands it.
    public static func isValidAuthenticationCode(
        _ tag: [UInt8], for message: [UInt8], using key: [UInt8], truncatedTo byteCount: Int
    ) -> Bool {
        guard (1 ... Self.byteCount).contains(byteCount), tag.count == byteCount else { return false }
        var full = authenticationCode(for: message, using: key)
        defer { SecureMemory.zero(&full) }
        // Compared in place: no copy of the expected tag is made (it would be left unwiped).
        return full.withUnsafeBytes { expected in
            tag.withUnsafeBytes { given in
                ConstantTime.equals(UnsafeRawBufferPointer(rebasing: expected[..<byteCount]), given)
            }
        }
    }

    /// Overwrites the keyed state with zeros. A keyed state is as secret as its key: wipe a
    /// state that is kept for reuse (and never finalized) when done with it.
    public mutating func wipe() {
        withUnsafeMutableBytes(of: &state) { SecureMemory.zero($0) }
    }
}

extension HMACSHA256: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A redacted description: a keyed state lets anyone compute tags, like the key itself.
    public var description: String { "HMACSHA256(keyed state redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
    /// A mirror without children, so `dump` and debuggers do not show the keyed state.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
