import SessionKit
import SignalPrimitives

/// The sealed value of a `sessions` row: which sessions the record holds, in order, and the
/// current session (without its skipped keys).
///
///     hasCurrent      u8      0 or 1
///     [current]       u32(len) || SessionState.serializedWithoutSkippedMessageKeys()
///     previousCount   u8      ≤ ProtocolLimits.maxPreviousSessions
///     previous        previousCount × state key (32), most recent first
///
/// The previous sessions are rows of `session_states`, and every session's skipped keys rows of
/// `skipped_keys`, under the same state keys.
struct SessionRecordLayout {
    /// The current session without its skipped keys, if any.
    var current: [UInt8]?
    /// The state keys of the previous sessions, most recent first.
    var previous: [[UInt8]]

    /// The value's bytes for `current` (a session without its skipped keys) and the previous
    /// sessions' state keys (secret: the caller wipes them). Written into storage reserved in
    /// full first, so no partial copy is left behind by a reallocation.
    static func encode(current: SecureBytes?, previous: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1 + 4 + (current?.count ?? 0) + 1 + 32 * previous.count)
        out.append(current == nil ? 0 : 1)
        if let current {
            out.appendBigEndian(UInt32(current.count))
            current.withUnsafeBytes { out.append(contentsOf: $0) }
        }
        out.append(UInt8(truncatingIfNeeded: previous.count))
        for key in previous { out += key }
        return out
    }

    /// Decodes an opened value.
    /// - Throws: `ValueDecodingError` for a value that does not follow the layout.
    init(decoding bytes: SecureBytes) throws(ValueDecodingError) {
        var result: Result<SessionRecordLayout, ValueDecodingError> = .failure(ValueDecodingError())
        bytes.withUnsafeBytes { buffer in
            var reader = ValueReader(buffer)
            do throws(ValueDecodingError) {
                var current: [UInt8]?
                switch try reader.readByte() {
                case 0: current = nil
                case 1: current = try reader.readBytes(Int(try reader.readUInt32()))
                default: throw ValueDecodingError()
                }
                let count = Int(try reader.readByte())
                guard count <= ProtocolLimits.maxPreviousSessions else { throw ValueDecodingError() }
                var previous: [[UInt8]] = []
                for _ in 0 ..< count { previous.append(try reader.readBytes(32)) }
                guard reader.isAtEnd else { throw ValueDecodingError() }
                result = .success(SessionRecordLayout(current: current, previous: previous))
            } catch {
                result = .failure(error)
            }
        }
        self = try result.get()
    }

    init(current: [UInt8]?, previous: [[UInt8]]) {
        self.current = current
        self.previous = previous
    }
}
