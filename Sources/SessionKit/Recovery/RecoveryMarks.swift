import SignalPrimitives

/// What a `SessionManager` remembers about recovery with one peer device (SPEC §9), kept in
/// that device's `SessionRecord` so that it is persisted, compared and swapped with the record:
/// when it last sent the device a retry notice and for which failures, when a notice from the
/// device last made it act, and when it last advised starting a new session with it.
///
/// Each limit is "at most once per hour per peer device" (`interval`); a clock that went back
/// (the last time is in the future) allows the action again rather than blocking it for as long
/// as the clock was off.
@_spi(Storage) @_spi(Testing) public struct RecoveryMarks: Sendable, Hashable, CustomStringConvertible {
    /// The shortest time between two notices sent to one device, two actions on notices from
    /// one device, or two pieces of advice to start a new session with one device: one hour.
    public static let interval: Int64 = 3600
    /// How many failures noticed (the digests of (ratchet key) or (group, chain id)) are
    /// remembered per device; beyond it the oldest are forgotten. One notice per hour at most
    /// is sent, so this covers the last eight notices.
    public static let maximumNoticedFailures = 8
    /// The bytes of a failure's digest: the first 16 bytes of SHA-256.
    static let failureDigestByteCount = 16

    /// When a retry notice was last sent to the device.
    public internal(set) var noticeSentAt: Timestamp?
    /// The failures a notice was sent for, oldest first (16-byte digests).
    public internal(set) var noticedFailures: [[UInt8]]
    /// When a notice from the device last made this device act (archive a session, send a
    /// distribution again).
    public internal(set) var actedOnNoticeAt: Timestamp?
    /// When starting a new session with the device was last advised (`noSession`,
    /// `unknownPreKey`).
    public internal(set) var newSessionAdvisedAt: Timestamp?

    /// No marks.
    public init() {
        noticedFailures = []
    }

    /// Whether nothing is remembered.
    public var isEmpty: Bool {
        noticeSentAt == nil && noticedFailures.isEmpty && actedOnNoticeAt == nil && newSessionAdvisedAt == nil
    }

    /// Whether the last time `last` leaves `now` free for the next action (at least `interval`
    /// later, or a clock that went back).
    static func allows(_ now: Timestamp, after last: Timestamp?) -> Bool {
        guard let last else { return true }
        return now < last || now.seconds(since: last) >= interval
    }

    /// The digest of a failure's identifying bytes.
    static func digest(_ failure: [UInt8]) -> [UInt8] { Array(SHA256.hash(failure).prefix(failureDigestByteCount)) }

    /// Whether a notice may be sent now for the failure `failure` (the identifying bytes of a
    /// (ratchet key) or a (group, chain id)): none was sent for it, and none in the last hour.
    func allowsNotice(for failure: [UInt8], at now: Timestamp) -> Bool {
        Self.allows(now, after: noticeSentAt) && !noticedFailures.contains(Self.digest(failure))
    }

    /// Records a notice sent now for `failure`.
    mutating func recordNotice(for failure: [UInt8], at now: Timestamp) {
        noticeSentAt = now
        noticedFailures.append(Self.digest(failure))
        if noticedFailures.count > Self.maximumNoticedFailures {
            noticedFailures.removeFirst(noticedFailures.count - Self.maximumNoticedFailures)
        }
    }

    /// Whether a notice from the device may make this device act now.
    func allowsAction(at now: Timestamp) -> Bool { Self.allows(now, after: actedOnNoticeAt) }

    /// Records an action on a notice now.
    mutating func recordAction(at now: Timestamp) { actedOnNoticeAt = now }

    /// Whether starting a new session may be advised now.
    func allowsNewSessionAdvice(at now: Timestamp) -> Bool { Self.allows(now, after: newSessionAdvisedAt) }

    /// Records advice given now.
    mutating func recordNewSessionAdvice(at now: Timestamp) { newSessionAdvisedAt = now }

    // MARK: Persistence

    /// The persisted-state version of a standalone blob (`serialized()`).
    static let persistenceVersion: UInt8 = 1

    /// Writes the body:
    ///
    ///     flags            u8    bit 0: noticeSentAt, bit 1: actedOnNoticeAt,
    ///                            bit 2: newSessionAdvisedAt follow; other bits 0
    ///     [noticeSentAt]         i64 seconds since 1970 (two's complement, big-endian)
    ///     [actedOnNoticeAt]      i64
    ///     [newSessionAdvisedAt]  i64
    ///     count            u8    ≤ maximumNoticedFailures
    ///     count × 16             failure digests, oldest first, no digest twice
    func encode(into writer: inout StateWriter) {
        writer.write((noticeSentAt == nil ? 0 : 0x01) | (actedOnNoticeAt == nil ? 0 : 0x02) | (newSessionAdvisedAt == nil ? 0 : 0x04) as UInt8)
        for time in [noticeSentAt, actedOnNoticeAt, newSessionAdvisedAt].compactMap({ $0 }) {
            writer.write(UInt64(bitPattern: time.secondsSince1970))
        }
        writer.write(UInt8(truncatingIfNeeded: noticedFailures.count))
        for digest in noticedFailures { writer.writeFixed(digest) }
    }

    /// Reads the body `encode(into:)` writes, strictly.
    /// - Throws: `SessionError.invalidPayload` for unknown flags, too many digests or a digest
    ///   repeated.
    init(decodingFrom reader: inout StateReader) throws(SessionError) {
        let flags = try reader.readByte()
        guard flags & ~0x07 == 0 else { throw .invalidPayload }
        func time(_ bit: UInt8) throws(SessionError) -> Timestamp? {
            guard flags & bit != 0 else { return nil }
            return Timestamp(secondsSince1970: Int64(bitPattern: try reader.readUInt64()))
        }
        noticeSentAt = try time(0x01)
        actedOnNoticeAt = try time(0x02)
        newSessionAdvisedAt = try time(0x04)
        let count = Int(try reader.readByte())
        guard count <= Self.maximumNoticedFailures else { throw .invalidPayload }
        var digests: [[UInt8]] = []
        for _ in 0 ..< count {
            let digest = try reader.readFixed(Self.failureDigestByteCount)
            guard !digests.contains(digest) else { throw .invalidPayload }
            digests.append(digest)
        }
        noticedFailures = digests
    }

    /// The marks as a standalone blob (`StateWriter`'s envelope, kind `recoveryMarks`), for a
    /// store that keeps a record in parts.
    public func serialized() -> [UInt8] {
        var writer = StateWriter(kind: .recoveryMarks, version: Self.persistenceVersion, capacity: 64 + 16 * noticedFailures.count)
        encode(into: &writer)
        return writer.finish()
    }

    /// Loads marks from `serialized()`'s blob.
    /// - Throws: `SessionError.invalidPayload` for a malformed blob, `.unsupportedVersion` for
    ///   an unknown version.
    public init(serialized blob: [UInt8]) throws(SessionError) {
        var reader = try StateReader(blob, kind: .recoveryMarks, supportedVersions: 1 ... Self.persistenceVersion)
        try self.init(decodingFrom: &reader)
        try reader.finish()
    }

    /// The times and the number of failures remembered (nothing here is secret).
    public var description: String {
        "RecoveryMarks(noticeSentAt: \(noticeSentAt.map(\.description) ?? "never"), failures: \(noticedFailures.count), "
            + "actedOnNoticeAt: \(actedOnNoticeAt.map(\.description) ?? "never"), "
            + "newSessionAdvisedAt: \(newSessionAdvisedAt.map(\.description) ?? "never"))"
    }
}

/// The recovery marks of senders without a session, in memory and bounded (`SessionManager`):
/// a message from an address this device has no session with writes nothing to the store, so
/// forged messages from made-up senders cost no row; the limits still hold while the process
/// runs (and start again after a restart, which only allows one more notice or advice).
struct SessionlessRecoveryMarks: Sendable {
    /// How many senders' marks are kept; beyond it the least recently written go.
    static let capacity = 1024

    private var marks: [ProtocolAddress: RecoveryMarks] = [:]
    private var order: [ProtocolAddress] = []

    /// The marks of `address` (empty when none are kept).
    subscript(address: ProtocolAddress) -> RecoveryMarks { marks[address] ?? RecoveryMarks() }

    /// Keeps `updated` as the marks of `address`, dropping the least recently written beyond
    /// `capacity`.
    mutating func keep(_ updated: RecoveryMarks, for address: ProtocolAddress) {
        if marks.updateValue(updated, forKey: address) != nil, let index = order.firstIndex(of: address) { order.remove(at: index) }
        order.append(address)
        while order.count > Self.capacity { marks[order.removeFirst()] = nil }
    }

    /// How many senders' marks are kept.
    var count: Int { marks.count }
}

