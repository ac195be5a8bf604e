/// Big-endian integer helpers for the wire formats.
extension Array where Element == UInt8 {
    /// Appends `value` as 4 big-endian bytes (SPEC's `u32`).
    @inlinable
    mutating func appendBigEndian(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }
}

extension Collection where Element == UInt8, Index == Int {
    /// Reads a big-endian `u32` at `offset`; the caller has checked the length.
    @inlinable
    func readBigEndianUInt32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }
}
