@_spi(Storage) import SessionKit
import SignalPrimitives

/// The sealed values that say what a session record holds:
///
/// - a `sessions` row's value, rewritten with every message (one small row, one page):
///
///       flags           u8      bit 0: a current session follows; bit 1: the device is pinned
///                               to post-quantum sessions (`SessionRecord.requiresPostQuantum`);
///                               other bits 0 (a value written before the pin existed has 0 or 1)
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
    /// The flag of a `sessions` value that says a current session follows.
    static let hasCurrentFlag: UInt8 = 0x01
    /// The flag of a `sessions` value that says the device is pinned to post-quantum sessions.
    static let requiresPostQuantumFlag: UInt8 = 0x02

    /// The `sessions` value for `current` (a session without its skipped keys) and the pin,
    /// written into storage reserved in full first, so no partial copy is left behind by a
    /// reallocation (secret: the caller wipes it).
    static func encode(current: SecureBytes?, requiresPostQuantum: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1 + 4 + (current?.count ?? 0))
        out.append((current == nil ? 0 : hasCurrentFlag) | (requiresPostQuantum ? requiresPostQuantumFlag : 0))
        if let current {
            out.appendBigEndian(UInt32(current.count))
            current.withUnsafeBytes { out.append(contentsOf: $0) }
        }
        return out
    }

    /// The current session's part (secret: the caller wipes it) and the pin from an opened
    /// `sessions` value.
    /// - Throws: `ValueDecodingError` for a value that does not follow the layout.
    static func decodeCurrent(_ bytes: SecureBytes) throws(ValueDecodingError) -> (current: [UInt8]?, requiresPostQuantum: Bool) {
        try bytes.withUnsafeBytes { (buffer) throws(ValueDecodingError) -> (current: [UInt8]?, requiresPostQuantum: Bool) in
            var reader = ValueReader(buffer)
            let flags = try reader.readByte()
            guard flags & ~(hasCurrentFlag | requiresPostQuantumFlag) == 0 else { throw ValueDecodingError() }
            let current = flags & hasCurrentFlag != 0 ? try reader.readBytes(Int(try reader.readUInt32())) : nil
            guard reader.isAtEnd else { throw ValueDecodingError() }
            return (current, flags & requiresPostQuantumFlag != 0)
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
