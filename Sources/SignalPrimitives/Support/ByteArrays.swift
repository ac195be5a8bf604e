/// New zeroed byte arrays of the fixed sizes the primitives return (32 and 64 bytes).
///
/// They are made from an array literal. For `[UInt8](repeating:count:)` (and every other way
/// of allocating an array of a run-time size) Swift 6 on Linux looks the storage type up in the
/// runtime's generic-metadata cache on each call: about 800 instructions per allocation against
/// about 360 through the literal, which is a tenth of an HMAC or a SHA-512 of 64 bytes.
@usableFromInline
enum ByteArrays {
    /// 32 zero bytes in a new, uniquely referenced array.
    @inlinable
    static func zeroed32() -> [UInt8] {
        var bytes: [UInt8] = [
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ]
        bytes.withUnsafeMutableBytes { _ in }  // take unique ownership now
        return bytes
    }

    /// 64 zero bytes in a new, uniquely referenced array.
    @inlinable
    static func zeroed64() -> [UInt8] {
        var bytes: [UInt8] = [
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ]
        bytes.withUnsafeMutableBytes { _ in }  // take unique ownership now
        return bytes
    }

    /// `count` zero bytes in a new array: through a literal for 32 and 64 bytes.
    @inlinable
    static func zeroed(_ count: Int) -> [UInt8] {
        switch count {
        case 32: return zeroed32()
        case 64: return zeroed64()
        default: return [UInt8](repeating: 0, count: max(count, 0))
        }
    }
}
