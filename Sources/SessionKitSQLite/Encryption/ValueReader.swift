/// Reads the fields of an opened value; any overrun sets nothing and throws.
struct ValueReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Whether every byte was read.
    var isAtEnd: Bool { offset == bytes.count }

    mutating func readByte() throws(ValueDecodingError) -> UInt8 {
        guard offset < bytes.count else { throw ValueDecodingError() }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt16() throws(ValueDecodingError) -> UInt16 {
        let high = try readByte(), low = try readByte()
        return UInt16(high) << 8 | UInt16(low)
    }

    mutating func readUInt32() throws(ValueDecodingError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0 ..< 4 { value = value << 8 | UInt32(try readByte()) }
        return value
    }

    mutating func readUInt64() throws(ValueDecodingError) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0 ..< 8 { value = value << 8 | UInt64(try readByte()) }
        return value
    }

    mutating func readBytes(_ count: Int) throws(ValueDecodingError) -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else { throw ValueDecodingError() }
        defer { offset += count }
        return Array(bytes[offset ..< offset + count])
    }

    /// The rest of the bytes as a buffer (no copy); the reader is then at its end.
    mutating func readRest() -> UnsafeRawBufferPointer {
        defer { offset = bytes.count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset...])
    }
}

/// An opened value whose fields do not decode (mapped to `SQLiteStoreError.invalidValue`).
struct ValueDecodingError: Error {}
