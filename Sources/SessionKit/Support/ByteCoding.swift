/// Big-endian integer helpers for the wire formats, shared with SessionKitSQLite's value
/// layouts (`@_spi(Storage)`).
extension Array where Element == UInt8 {
    /// Appends `value` as 4 big-endian bytes (SPEC's `u32`).
    @inlinable @_spi(Storage) @_spi(Testing)
    public mutating func appendBigEndian(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends `value` as 2 big-endian bytes.
    @inlinable @_spi(Storage) @_spi(Testing)
    public mutating func appendBigEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends `value` as 8 big-endian bytes (two's complement).
    @inlinable @_spi(Storage) @_spi(Testing)
    public mutating func appendBigEndian(_ value: Int64) {
        let bits = UInt64(bitPattern: value)
        appendBigEndian(UInt32(truncatingIfNeeded: bits >> 32))
        appendBigEndian(UInt32(truncatingIfNeeded: bits))
    }
}

/// Reading big-endian integers from bytes (`@_spi(Storage)`).
extension Collection where Element == UInt8, Index == Int {
    /// Reads a big-endian `u32` at `offset`; the caller has checked the length.
    @inlinable @_spi(Storage) @_spi(Testing)
    public func readBigEndianUInt32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }
}
