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
@_spi(Storage) @_spi(Testing) public enum StateKind: UInt8, Sendable {
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
    /// What a manager remembers about recovery with one peer device (`RecoveryMarks`).
    case recoveryMarks = 0x08
}

/// Writes the body of a persisted state. Secrets written here end in `finish()`'s array;
/// callers wipe it with `SecureMemory.zero` when they no longer need it.
///
/// The bytes being written live in storage whose growth the writer manages itself: when an
/// append needs more room, the bytes move to an allocation of at least twice the size and the
/// old allocation is wiped (`sodium_memzero`) before it is freed. The last allocation is wiped
/// when the writer goes away (after `finish()` copied it out, or when it is abandoned), so
/// the only copy of the secrets that outlives the writer is the blob `finish()` returns.
@_spi(Storage) @_spi(Testing) public struct StateWriter {
    private var storage: StateWriterStorage
    private let kind: StateKind

    /// Starts a blob of `kind` at `version`.
    /// - Parameter kind: the kind of state the blob holds.
    /// - Parameter version: the version of the body's layout for that kind.
    /// - Parameter capacity: the expected size of the finished blob in bytes (envelope
    ///   included). Writing more is fine: the storage grows, wiping what it leaves behind.
    public init(kind: StateKind, version: UInt8, capacity: Int = StateWriter.defaultCapacity) {
        self.init(kind: kind, version: version, capacity: capacity, releaseObserver: nil)
    }

    /// `init(kind:version:capacity:)` with a test hook that sees every allocation the writer
    /// releases (on growth and at the end), after it was wiped and before it is freed.
    init(kind: StateKind, version: UInt8, capacity: Int,
         releaseObserver: ((UnsafeRawBufferPointer) -> Void)?) {
        self.kind = kind
        storage = StateWriterStorage(capacity: max(capacity, Self.envelopeByteCount), releaseObserver: releaseObserver)
        let magic: (UInt8, UInt8, UInt8, UInt8) = (0x53, 0x4B, 0x53, 0x54)   // "SKST"
        withUnsafeBytes(of: magic) { storage.append($0) }
        storage.append(kind.rawValue)
        storage.append(version)
    }

    /// The capacity a writer starts with when the caller gives no estimate.
    public static let defaultCapacity = 256
    /// The bytes of the envelope around a body: magic, kind, version and checksum.
    static let envelopeByteCount = 4 + 1 + 1 + checksumByteCount
    /// The bytes of the checksum: the first 16 bytes of SHA-256.
    static let checksumByteCount = 16

    /// The storage, copied first if another writer shares it (a copied writer).
    private mutating func uniqueStorage() -> StateWriterStorage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// Appends one byte.
    public mutating func write(_ value: UInt8) { uniqueStorage().append(value) }

    /// Appends a boolean as 0x00 or 0x01.
    public mutating func write(_ value: Bool) { uniqueStorage().append(value ? 1 : 0) }

    /// Appends a big-endian u32.
    public mutating func write(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { uniqueStorage().append($0) }
    }

    /// Appends a big-endian u64.
    public mutating func write(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { uniqueStorage().append($0) }
    }

    /// Appends exactly `value.count` bytes (a fixed-size field).
    public mutating func writeFixed(_ value: [UInt8]) {
        value.withUnsafeBytes { uniqueStorage().append($0) }
    }

    /// Appends the secret bytes as a fixed-size field.
    public mutating func writeFixed(_ value: SecureBytes) {
        value.withUnsafeBytes { uniqueStorage().append($0) }
    }

    /// Appends `u32(count) || value`.
    public mutating func writeVariable(_ value: [UInt8]) {
        write(UInt32(value.count))
        writeFixed(value)
    }

    /// Appends the checksum and returns the blob. The writer's own storage is wiped when it
    /// is released; the returned array is the caller's to wipe.
    public consuming func finish() -> [UInt8] {
        let storage = uniqueStorage()
        withUnsafeTemporaryAllocation(byteCount: SHA256.byteCount, alignment: 16) { digest in
            digest.initializeMemory(as: UInt8.self, repeating: 0)
            storage.withUnsafeBytes { _ = try? SHA256.hash(bytes: $0, into: digest) }
            storage.append(UnsafeRawBufferPointer(rebasing: digest[..<Self.checksumByteCount]))
        }
        return storage.withUnsafeBytes { Array($0) }
    }
}

/// The bytes of a blob being written, in one allocation whose capacity `StateWriter`
/// controls. Every allocation it lets go of (the old one on growth, the last one on release)
/// is wiped with `sodium_memzero` first.
final class StateWriterStorage {
    private var pointer: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0
    /// Test hook: called with each allocation after it was wiped and before it is freed.
    private let releaseObserver: ((UnsafeRawBufferPointer) -> Void)?

    init(capacity: Int, releaseObserver: ((UnsafeRawBufferPointer) -> Void)?) {
        self.capacity = max(capacity, 1)
        pointer = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
        self.releaseObserver = releaseObserver
    }

    /// A new storage holding the same bytes (for a writer that was copied).
    func copy() -> StateWriterStorage {
        let other = StateWriterStorage(capacity: capacity, releaseObserver: releaseObserver)
        withUnsafeBytes { other.append($0) }
        return other
    }

    /// Appends `bytes`, growing first if they do not fit.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (pointer + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends one byte.
    func append(_ byte: UInt8) {
        reserve(1)
        pointer.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Makes room for `additional` more bytes: moves the contents to an allocation of at
    /// least twice the capacity and wipes the old one before freeing it.
    private func reserve(_ additional: Int) {
        let required = count + additional
        guard required > capacity else { return }
        let newCapacity = max(required, capacity > Int.max / 2 ? required : capacity * 2)
        let newPointer = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newPointer.copyMemory(from: pointer, byteCount: count)
        release(pointer, capacity)
        pointer = newPointer
        capacity = newCapacity
    }

    /// Calls `body` with the bytes written so far.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Wipes and frees one allocation.
    private func release(_ allocation: UnsafeMutableRawPointer, _ size: Int) {
        SecureMemory.zero(UnsafeMutableRawBufferPointer(start: allocation, count: size))
        releaseObserver?(UnsafeRawBufferPointer(start: allocation, count: size))
        allocation.deallocate()
    }

    deinit { release(pointer, capacity) }
}

/// Reads a persisted state written by `StateWriter`, strictly.
///
/// The reader keeps a reference to the caller's array instead of copying it (arrays share
/// their storage), so reading makes no new copy of the secrets in the blob: only what the
/// caller asks for (`readSecret` straight into `SecureBytes`, `readFixed`/`readVariable` into
/// arrays) is copied. Wipe the blob after the reader is gone: while it is alive, a wipe
/// through `SecureMemory.zero(&blob)` would copy the array first and wipe the copy.
@_spi(Storage) @_spi(Testing) public struct StateReader {
    private let bytes: [UInt8]
    private var offset: Int
    /// Where the body ends (the checksum starts).
    private let end: Int
    /// The blob's version byte.
    public let version: UInt8

    /// Validates the envelope (magic, kind, checksum) and positions at the body.
    /// - Throws: `SessionError.invalidPayload` for a bad envelope, `SessionError.unsupportedVersion`
    ///   when the version is not in `supportedVersions`.
    public init(_ blob: [UInt8], kind: StateKind, supportedVersions: ClosedRange<UInt8>) throws(SessionError) {
        let checksumCount = StateWriter.checksumByteCount
        guard blob.count >= StateWriter.envelopeByteCount, blob[0..<4].elementsEqual("SKST".utf8),
              blob[4] == kind.rawValue else {
            throw .invalidPayload
        }
        let end = blob.count - checksumCount
        let checksumMatches = blob.withUnsafeBytes { raw in
            withUnsafeTemporaryAllocation(byteCount: SHA256.byteCount, alignment: 16) { digest in
                digest.initializeMemory(as: UInt8.self, repeating: 0)
                guard (try? SHA256.hash(bytes: UnsafeRawBufferPointer(rebasing: raw[..<end]), into: digest)) != nil else {
                    return false
                }
                return ConstantTime.equals(UnsafeRawBufferPointer(rebasing: digest[..<checksumCount]),
                                           UnsafeRawBufferPointer(rebasing: raw[end...]))
            }
        }
        guard checksumMatches else { throw .invalidPayload }
        guard supportedVersions.contains(blob[5]) else { throw .unsupportedVersion }
        bytes = blob
        version = blob[5]
        offset = 6
        self.end = end
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

    /// Reads an address written as `Encode(address)` (`u8(len) || uid || u32(device)`): the
    /// user id must be 1–255 bytes of well-formed UTF-8.
    /// - Throws: `SessionError.invalidPayload` otherwise.
    public mutating func readAddress() throws(SessionError) -> ProtocolAddress {
        let count = Int(try readByte())
        let uid = try readFixed(count)
        let device = try readUInt32()
        guard let userID = String(validating: uid, as: UTF8.self) else { throw .invalidPayload }
        let address: ProtocolAddress
        do { address = try ProtocolAddress(userID: userID, deviceID: device) } catch { throw .invalidPayload }
        guard address.userIDBytes.elementsEqual(uid) else { throw .invalidPayload }
        return address
    }

    /// Reads a group id written as `Encode(group)` (`u8(len) || gid`, 1–255 bytes).
    /// - Throws: `SessionError.invalidPayload` otherwise.
    public mutating func readGroupID() throws(SessionError) -> GroupID {
        let count = Int(try readByte())
        do { return try GroupID(rawRepresentation: try readFixed(count)) } catch { throw .invalidPayload }
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
