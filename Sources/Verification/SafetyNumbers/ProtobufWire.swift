/// The few protobuf wire-format pieces the scannable fingerprint needs, written by hand
/// (varints and length-delimited fields), with a strict reader.
enum ProtobufWire {
    /// Wire type 0: a varint.
    static let varintType: UInt64 = 0
    /// Wire type 2: a length-delimited field.
    static let lengthDelimitedType: UInt64 = 2

    /// The field key `number << 3 | wireType`.
    static func tag(_ number: Int, _ wireType: UInt64) -> UInt64 { UInt64(number) << 3 | wireType }

    /// Appends `value` as a minimal varint.
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    /// Appends a length-delimited field.
    static func appendBytes(_ number: Int, _ bytes: [UInt8], to out: inout [UInt8]) {
        appendVarint(tag(number, lengthDelimitedType), to: &out)
        appendVarint(UInt64(bytes.count), to: &out)
        out.append(contentsOf: bytes)
    }

    /// A strict cursor over an encoded message.
    struct Reader {
        private let bytes: ArraySlice<UInt8>
        private var offset: Int

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            offset = bytes.startIndex
        }

        /// Whether every byte was consumed.
        var isAtEnd: Bool { offset == bytes.endIndex }

        /// Reads a varint of at most 10 bytes.
        /// - Throws: `VerificationError.invalidVarint` when it is truncated, longer than 10
        ///   bytes, overflows 64 bits or is not minimally encoded (a final 0x00 byte after others).
        mutating func readVarint() throws(VerificationError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            var count = 0
            while true {
                guard offset < bytes.endIndex, count < 10 else { throw .invalidVarint }
                let byte = bytes[offset]
                offset += 1
                count += 1
                let payload = UInt64(byte & 0x7f)
                if count == 10, payload > 1 { throw .invalidVarint } // beyond 64 bits
                value |= payload << shift
                if byte & 0x80 == 0 {
                    if count > 1, byte == 0 { throw .invalidVarint } // non-minimal
                    return value
                }
                shift += 7
            }
        }

        /// Reads a length prefix and the bytes it announces.
        /// - Throws: `VerificationError.invalidVarint` for a bad length,
        ///   `VerificationError.truncatedFingerprint` when fewer bytes remain.
        mutating func readLengthDelimited() throws(VerificationError) -> ArraySlice<UInt8> {
            let length = try readVarint()
            guard length <= UInt64(bytes.endIndex - offset) else { throw .truncatedFingerprint }
            let end = offset + Int(length)
            defer { offset = end }
            return bytes[offset ..< end]
        }
    }
}
