@_spi(Storage) import SessionKit
import SignalPrimitives

/// The sealed values that say what a session record holds:
///
/// - a `sessions` row's value, rewritten with every message (one small row, one page):
///
///       hasCurrent      u8      0 or 1
///       [current]       u32(len) || SessionState.serializedWithoutSkippedMessageKeys()
///
/// - a `session_orders` row's value, rewritten only when the previous sessions change (a
///   session is archived, promoted or dropped), so that the 32 bytes per previous session do
///   not weigh on every message:
///
///       previousCount   u8      1 … ProtocolLimits.maxPreviousSessions
///       previous        previousCount × state key (32), most recent first
///
/// The previous sessions are rows of `session_states`, and every session's skipped keys rows of
/// `skipped_keys`, under the same state keys.
enum SessionRecordLayout {
    /// The `sessions` value for `current` (a session without its skipped keys), written into
    /// storage reserved in full first, so no partial copy is left behind by a reallocation
    /// (secret: the caller wipes it).
    static func encode(current: SecureBytes?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1 + 4 + (current?.count ?? 0))
        out.append(current == nil ? 0 : 1)
        if let current {
            out.appendBigEndian(UInt32(current.count))
            current.withUnsafeBytes { out.append(contentsOf: $0) }
        }
        return out
    }

    /// The current session's part from an opened `sessions` value (secret: the caller wipes it).
    /// - Throws: `ValueDecodingError` for a value that does not follow the layout.
    static func decodeCurrent(_ bytes: SecureBytes) throws(ValueDecodingError) -> [UInt8]? {
        try bytes.withUnsafeBytes { (buffer) throws(ValueDecodingError) -> [UInt8]? in
            var reader = ValueReader(buffer)
            let current: [UInt8]?
            switch try reader.readByte() {
            case 0: current = nil
            case 1: current = try reader.readBytes(Int(try reader.readUInt32()))
            default: throw ValueDecodingError()
            }
            guard reader.isAtEnd else { throw ValueDecodingError() }
            return current
        }
    }

    /// The `session_orders` value for the previous sessions' state keys.
    static func encode(previous: [[UInt8]]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: previous.count)] + previous.flatMap { $0 }
    }

    /// The previous sessions' state keys from an opened `session_orders` value.
    /// - Throws: `ValueDecodingError` for a value that does not follow the layout.
    static func decodePrevious(_ bytes: SecureBytes) throws(ValueDecodingError) -> [[UInt8]] {
        try bytes.withUnsafeBytes { (buffer) throws(ValueDecodingError) -> [[UInt8]] in
            var reader = ValueReader(buffer)
            let count = Int(try reader.readByte())
            guard (1 ... ProtocolLimits.maxPreviousSessions).contains(count) else { throw ValueDecodingError() }
            var previous: [[UInt8]] = []
            for _ in 0 ..< count { previous.append(try reader.readBytes(32)) }
            guard reader.isAtEnd else { throw ValueDecodingError() }
            return previous
        }
    }
}
