import SignalPrimitives

/// The common envelope of every persisted state (session, sender-key chains, prekeys,
/// identity, trust records):
///
///     magic "SKST" (4) || kind (u8) || version (u8) || body || checksum (16)
///
/// `checksum` is the first 16 bytes of SHA-256 over everything before it. It detects
/// truncation and accidental corruption; it is not a MAC (storage that an attacker can
/// write must be protected by the app, for example with `SelfEncryption`).
/// Inside the body, integers are big-endian and byte strings are `u32(length) || bytes`.
/// Loading is strict: a wrong magic, kind or checksum, a truncated field or trailing bytes
/// is `SessionError.invalidPayload`; an unknown version is `SessionError.unsupportedVersion`.
public enum StateKind: UInt8, Sendable {
    /// A Double Ratchet session.
    case session = 0x01
    /// A sender's own sender-key chain.
    case senderKeySender = 0x02
    /// The sender-key chains received from one sender.
    case senderKeyReceiver = 0x03
    /// Signed and one-time prekeys.
    case preKeys = 0x04
    /// An identity key pair.
    case identity = 0x05
    /// Trust-on-first-use records.
    case trust = 0x06
    /// A session record (current and previous sessions of one peer device).
    case sessionRecord = 0x07
}

/// Writes the body of a persisted state. Secrets written here end in `finish()`'s array;
/// callers wipe it with `SecureMemory.zero` when they no longer need it.
public struct StateWriter {
    private var bytes: [UInt8]
    private let kind: StateKind

    /// Starts a blob of `kind` at `version`.
    public init(kind: StateKind, version: UInt8) {
        self.kind = kind
        bytes = Array("SKST".utf8) + [kind.rawValue, version]
    }

    /// Appends one byte.
    public mutating func write(_ value: UInt8) { bytes.append(value) }

    /// Appends a boolean as 0x00 or 0x01.
    public mutating func write(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// Appends a big-endian u32.
    public mutating func write(_ value: UInt32) { bytes.appendBigEndian(value) }

    /// Appends a big-endian u64.
    public mutating func write(_ value: UInt64) {
        bytes.appendBigEndian(UInt32(truncatingIfNeeded: value >> 32))
        bytes.appendBigEndian(UInt32(truncatingIfNeeded: value))
    }

    /// Appends exactly `value.count` bytes (a fixed-size field).
    public mutating func writeFixed(_ value: [UInt8]) { bytes.append(contentsOf: value) }

    /// Appends the secret bytes as a fixed-size field.
    public mutating func writeFixed(_ value: SecureBytes) { value.withUnsafeBytes { bytes.append(contentsOf: $0) } }

    /// Appends `u32(count) || value`.
    public mutating func writeVariable(_ value: [UInt8]) {
        write(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends the checksum and returns the blob.
    public consuming func finish() -> [UInt8] {
        bytes.append(contentsOf: SHA256.hash(bytes).prefix(16))
        return bytes
    }
}

/// Reads a persisted state written by `StateWriter`, strictly.
public struct StateReader {
    private let bytes: [UInt8]
    private var offset: Int
    private let end: Int
    /// The blob's version byte.
    public let version: UInt8

    /// Validates the envelope (magic, kind, checksum) and positions at the body.
    /// - Throws: `SessionError.invalidPayload` for a bad envelope, `SessionError.unsupportedVersion`
    ///   when the version is not in `supportedVersions`.
    public init(_ blob: [UInt8], kind: StateKind, supportedVersions: ClosedRange<UInt8>) throws(SessionError) {
        guard blob.count >= 6 + 16, blob[0..<4].elementsEqual("SKST".utf8), blob[4] == kind.rawValue else {
            throw .invalidPayload
        }
        let body = Array(blob[..<(blob.count - 16)])
        let digest = SHA256.hash(body)
        guard ConstantTime.equals(Array(digest.prefix(16)), Array(blob[(blob.count - 16)...])) else {
            throw .invalidPayload
        }
        guard supportedVersions.contains(blob[5]) else { throw .unsupportedVersion }
        bytes = body
        version = blob[5]
        offset = 6
        end = body.count
    }

    private mutating func take(_ count: Int) throws(SessionError) -> ArraySlice<UInt8> {
        guard count >= 0, end - offset >= count else { throw .invalidPayload }
        defer { offset += count }
        return bytes[offset ..< offset + count]
    }

    /// Reads one byte.
    public mutating func readByte() throws(SessionError) -> UInt8 { try take(1).first ?? 0 }

    /// Reads a boolean; a byte other than 0x00 or 0x01 is `invalidPayload`.
    public mutating func readBool() throws(SessionError) -> Bool {
        switch try readByte() {
        case 0: return false
        case 1: return true
        default: throw .invalidPayload
        }
    }

    /// Reads a big-endian u32.
    public mutating func readUInt32() throws(SessionError) -> UInt32 {
        let slice = try take(4)
        return slice.readBigEndianUInt32(at: slice.startIndex)
    }

    /// Reads a big-endian u64.
    public mutating func readUInt64() throws(SessionError) -> UInt64 {
        let high = UInt64(try readUInt32())
        return high << 32 | UInt64(try readUInt32())
    }

    /// Reads a fixed-size field of `count` bytes.
    public mutating func readFixed(_ count: Int) throws(SessionError) -> [UInt8] { Array(try take(count)) }

    /// Reads a fixed-size secret field straight into zeroing storage.
    public mutating func readSecret(_ count: Int) throws(SessionError) -> SecureBytes {
        let slice = try take(count)
        return slice.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// Reads `u32(count) || bytes`, refusing lengths above `maximum`.
    public mutating func readVariable(maximum: Int = 1 << 24) throws(SessionError) -> [UInt8] {
        let rawCount = try readUInt32()
        guard UInt64(rawCount) <= UInt64(max(maximum, 0)) else { throw .invalidPayload }
        let count = Int(rawCount)
        return Array(try take(count))
    }

    /// Requires that the whole body was read.
    /// - Throws: `SessionError.invalidPayload` for trailing bytes.
    public func finish() throws(SessionError) {
        guard offset == end else { throw .invalidPayload }
    }
}

extension StateWriter: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A redacted description: the blob being written holds secrets.
    public var description: String { "StateWriter(\(kind), contents redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
    /// A mirror without children, so `dump` and debuggers do not show the contents.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension StateReader: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A redacted description: the blob being read holds secrets.
    public var description: String { "StateReader(version: \(version), contents redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
    /// A mirror without children, so `dump` and debuggers do not show the contents.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
