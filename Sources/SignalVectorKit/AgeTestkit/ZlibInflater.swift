import CZlib
import Foundation

/// zlib decompression (RFC 1950) for the `compressed: zlib` files of C2SP/CCTV's age vectors,
/// through the system zlib.
enum ZlibInflater {
    /// The largest output accepted (the biggest CCTV file is a few MiB decompressed), so a
    /// malicious file cannot exhaust memory.
    static let maximumOutputByteCount = 64 << 20

    /// The decompressed bytes of one complete zlib stream.
    /// - Throws: `VectorFailure` for a malformed or truncated stream, data after its end, or
    ///   output above `maximumOutputByteCount`.
    static func inflate(_ input: Data) throws -> Data {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw VectorFailure("zlib could not be initialised")
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var input = [UInt8](input)
        let total = input.count
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(total)
            var status = Z_OK
            while status == Z_OK {
                status = buffer.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let result = CZlib.inflate(&stream, Z_NO_FLUSH)
                    output.append(UnsafeBufferPointer(rebasing: out[0 ..< out.count - Int(stream.avail_out)]))
                    return result
                }
                if output.count > maximumOutputByteCount { return Z_MEM_ERROR }
                if status == Z_BUF_ERROR, stream.avail_in == 0 { return Z_DATA_ERROR }   // truncated
            }
            return status
        }
        switch status {
        case Z_STREAM_END:
            guard stream.avail_in == 0 else { throw VectorFailure("data after the end of the zlib stream") }
            return output
        case Z_MEM_ERROR: throw VectorFailure("the zlib stream decompresses to more than \(maximumOutputByteCount) bytes")
        default: throw VectorFailure("the zlib stream is malformed or truncated (zlib status \(status))")
        }
    }
}
