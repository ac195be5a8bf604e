import CSodium

/// A source of random bytes for key generation and nonces.
///
/// The library always defaults to `SystemRandomSource`. Pass another source only to make
/// tests and test vectors deterministic.
public protocol RandomSource: Sendable {
    /// Fills `buffer` completely with random bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

extension RandomSource {
    /// Returns `count` random bytes.
    public func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(count, 0))
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }
}

/// The operating system's CSPRNG through libsodium's `randombytes_buf`.
public struct SystemRandomSource: RandomSource {
    /// Creates the system random source.
    public init() {}

    /// Fills `buffer` with cryptographically secure random bytes.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        _ = Sodium.isInitialized
        randombytes_buf(base, buffer.count)
    }
}

/// Convenience access to secure random bytes.
public enum SecureRandom {
    /// Returns `count` bytes from the system CSPRNG.
    public static func bytes(_ count: Int) -> [UInt8] { SystemRandomSource().bytes(count) }
}
