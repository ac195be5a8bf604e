import CSodium

/// Constant-time comparison for MACs, keys and fingerprints (`sodium_memcmp`).
public enum ConstantTime {
    /// Whether two byte buffers are equal, in time that depends only on their length.
    /// Buffers of different lengths are unequal (the length itself is not secret).
    @inlinable
    public static func equals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        return sodium_memcmp(pa, pb, a.count) == 0
    }

    /// Whether two byte arrays are equal, in time that depends only on their length.
    @inlinable
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in equals(pa, pb) } }
    }
}

/// Wiping of secrets held outside `SecureBytes`.
public enum SecureMemory {
    /// Overwrites the array's bytes with zeros (`sodium_memzero`), keeping its length.
    public static func zero(_ bytes: inout [UInt8]) {
        let count = bytes.count
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress, count > 0 { sodium_memzero(base, count) }
        }
    }

    /// Overwrites a buffer with zeros (`sodium_memzero`).
    public static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(base, buffer.count) }
    }
}
