@_spi(Storage) import SessionKit
import SignalPrimitives

/// The sealed values that say what a session record holds:
///
/// - a `sessions` row's value, rewritten with every message (one small row, one page):
///
///       flags           u8      bit 0: a current session follows; bit 1: the device is pinned
///                               to post-quantum sessions (`SessionRecord.requiresPostQuantum`);
///                               bit 2: recovery marks follow (SPEC §9's rate limits, only once
///                               a notice was sent, acted on or a new session advised);
///                               other bits 0 (a value written before the pin existed has 0 or 1)
///       [current]       u32(len) || SessionState.serializedWithoutSkippedMessageKeys()
///       [marks]         u32(len) || RecoveryMarks.serialized()
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
    /// The flag of a `sessions` value that says recovery marks follow.
    static let recoveryMarksFlag: UInt8 = 0x04

    /// What a `sessions` value holds besides the current session.
    struct Header {
        /// The current session's part (secret: the caller wipes it).
        var current: [UInt8]?
        /// `SessionRecord.requiresPostQuantum`.
        var requiresPostQuantum: Bool
        /// `SessionRecord.recoveryMarks` (empty when the value has none).
        var recoveryMarks: RecoveryMarks
    }

    /// The `sessions` value for `current` (a session without its skipped keys), the pin and the
    /// recovery marks, written into storage reserved in full first, so no partial copy is left
    /// behind by a reallocation (secret: the caller wipes it).
    static func encode(current: SecureBytes?, requiresPostQuantum: Bool, recoveryMarks: RecoveryMarks = RecoveryMarks()) -> [UInt8] {
        let marks = recoveryMarks.isEmpty ? nil : recoveryMarks.serialized()
        var out: [UInt8] = []
        out.reserveCapacity(1 + 4 + (current?.count ?? 0) + 4 + (marks?.count ?? 0))
        out.append((current == nil ? 0 : hasCurrentFlag) | (requiresPostQuantum ? requiresPostQuantumFlag : 0)
            | (marks == nil ? 0 : recoveryMarksFlag))
        if let current {
            out.appendBigEndian(UInt32(current.count))
            current.withUnsafeBytes { out.append(contentsOf: $0) }
        }
        if let marks {
            out.appendBigEndian(UInt32(marks.count))
            out.append(contentsOf: marks)
        }
        return out
    }

    /// The current session's part (secret: the caller wipes it), the pin and the recovery marks
    /// from an opened `sessions` value.
    /// - Throws: `ValueDecodingError` for a value that does not follow the layout (or marks
    ///   that do not load, or an empty set of marks).
    static func decodeCurrent(_ bytes: SecureBytes) throws(ValueDecodingError) -> Header {
        try bytes.withUnsafeBytes { (buffer) throws(ValueDecodingError) -> Header in
            var reader = ValueReader(buffer)
            let flags = try reader.readByte()
            guard flags & ~(hasCurrentFlag | requiresPostQuantumFlag | recoveryMarksFlag) == 0 else { throw ValueDecodingError() }
            let current = flags & hasCurrentFlag != 0 ? try reader.readBytes(Int(try reader.readUInt32())) : nil
            var marks = RecoveryMarks()
            if flags & recoveryMarksFlag != 0 {
                do { marks = try RecoveryMarks(serialized: try reader.readBytes(Int(try reader.readUInt32()))) } catch {
                    throw ValueDecodingError()
                }
                guard !marks.isEmpty else { throw ValueDecodingError() }
            }
            guard reader.isAtEnd else { throw ValueDecodingError() }
            return Header(current: current, requiresPostQuantum: flags & requiresPostQuantumFlag != 0, recoveryMarks: marks)
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
