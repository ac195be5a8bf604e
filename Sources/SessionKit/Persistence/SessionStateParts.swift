import SignalPrimitives

/// One skipped message key of a session, as a store that keeps skipped keys apart from the
/// rest of the session persists it (`SessionState.skippedMessageKeyEntries`).
///
/// A store that writes only what changed (a device can hold thousands of skipped keys, of
/// which one message adds or removes a few) keeps each entry under its `slot`: an entry never
/// changes, it is only added or removed.
@_spi(Storage) @_spi(Testing) public struct SkippedMessageKeyEntry: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The number of bytes of `slot`.
    public static let slotByteCount = X25519.keyByteCount + 4

    /// What the key decrypts: the sender's ratchet key (32 bytes) and the message counter
    /// (u32, big-endian). Unique within a session.
    public let slot: [UInt8]
    /// The message key (32 bytes, secret).
    public let messageKey: SecureBytes
    /// When the key was stored (seconds since 1970; 0: unknown, stamped when its session is
    /// next used: `SessionConfiguration.skippedKeyMaxAge`).
    public let storedAt: Int64

    init(slot: SkippedMessageKeys.Slot, messageKey: MessageKey, storedAt: Int64) {
        self.slot = Self.slotBytes(slot)
        self.messageKey = messageKey.storage
        self.storedAt = storedAt
    }

    /// The bytes of `slot`: its ratchet key and its counter (u32, big-endian).
    static func slotBytes(_ slot: SkippedMessageKeys.Slot) -> [UInt8] {
        var bytes = slot.ratchetKey.rawRepresentation
        bytes.appendBigEndian(slot.counter)
        return bytes
    }

    /// Reassembles an entry a store kept (`slot` of `slotByteCount` bytes, a 32-byte key, the
    /// time it was stored or 0 when the store kept none).
    /// - Throws: `SessionError.invalidPayload` for wrong lengths or a negative time.
    public init(slot: [UInt8], messageKey: SecureBytes, storedAt: Int64 = 0) throws(SessionError) {
        guard slot.count == Self.slotByteCount, messageKey.count == MessageKey.byteCount, storedAt >= 0 else { throw .invalidPayload }
        self.slot = slot
        self.messageKey = messageKey
        self.storedAt = storedAt
    }

    /// The slot, with the key itself redacted.
    public var description: String { "SkippedMessageKeyEntry(slot: \(slot.count) bytes, key redacted)" }
    /// The same as `description`.
    public var debugDescription: String { description }
}

extension SessionState {
    /// The skipped message keys, oldest first (the order `maxStored` evicts in).
    @_spi(Storage) @_spi(Testing) public var skippedMessageKeyEntries: [SkippedMessageKeyEntry] {
        zip(ratchet.skippedKeys.inAgeOrder, ratchet.skippedKeys.storedTimesInAgeOrder).map {
            SkippedMessageKeyEntry(slot: $0.0.slot, messageKey: $0.0.messageKey, storedAt: $0.1)
        }
    }

    /// The session as `serialized()` writes it, but with no skipped message key: the part that
    /// changes with every message, a few hundred bytes whatever the number of skipped keys.
    /// A store keeps the keys apart (`skippedMessageKeyEntries`) and reassembles the session
    /// with `init(serializedWithoutSkippedMessageKeys:skippedMessageKeys:)`.
    @_spi(Storage) @_spi(Testing) public func serializedWithoutSkippedMessageKeys() -> [UInt8] {
        var copy = self
        copy.ratchet.skippedKeys = SkippedMessageKeys()
        return copy.serialized()
    }

    /// Reassembles a session from `serializedWithoutSkippedMessageKeys()` and its skipped keys,
    /// oldest first.
    /// - Throws: `SessionError.invalidPayload` when the blob holds skipped keys itself, when
    ///   the keys exceed the session's `maxStored`, repeat a slot, or carry a non-canonical
    ///   ratchet key; the errors of `init(serialized:)` for the blob.
    @_spi(Storage) @_spi(Testing) public init(serializedWithoutSkippedMessageKeys blob: [UInt8], skippedMessageKeys entries: [SkippedMessageKeyEntry]) throws(SessionError) {
        var session = try SessionState(serialized: blob)
        guard session.ratchet.skippedKeys.isEmpty, entries.count <= session.configuration.maxStored else { throw .invalidPayload }
        var keys: [(slot: SkippedMessageKeys.Slot, messageKey: MessageKey)] = []
        keys.reserveCapacity(entries.count)
        var times: [Int64] = []
        times.reserveCapacity(entries.count)
        // Keys of one chain share their ratchet key: checked and decoded once per run of equal
        // keys (and the keys then share one array, which makes comparing them cheap).
        var ratchetKey: X25519.PublicKey?
        for entry in entries {
            guard entry.slot.count == SkippedMessageKeyEntry.slotByteCount else { throw .invalidPayload }
            let keyBytes = entry.slot.prefix(X25519.keyByteCount)
            if ratchetKey.map({ !$0.rawRepresentation.elementsEqual(keyBytes) }) ?? true {
                do { ratchetKey = try X25519.PublicKey(canonicalRepresentation: Array(keyBytes)) } catch { throw .invalidPayload }
            }
            guard let ratchetKey else { throw .invalidPayload }
            let counter = entry.slot.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            keys.append((SkippedMessageKeys.Slot(ratchetKey: ratchetKey, counter: counter), MessageKey(storage: entry.messageKey)))
            times.append(entry.storedAt)
        }
        session.ratchet.skippedKeys.append(keys, maxStored: session.configuration.maxStored, storedAt: times)
        // A repeated slot replaced its first key (fewer keys held than given): refused.
        guard session.ratchet.skippedKeys.count == entries.count else { throw .invalidPayload }
        self = session
    }
}

/// What changed in a session's skipped message keys since a store marked them persisted
/// (`SessionState.markSkippedKeysPersisted(token:)`), so that the store writes one row per key
/// added or removed instead of comparing every key the session holds.
@_spi(Storage) @_spi(Testing) public struct SkippedMessageKeyChanges: Sendable {
    /// The slots of keys removed since the mark (used, evicted or replaced). May name a slot
    /// the store does not hold (added and removed after the mark: deleting it is a no-op) or
    /// one that `added` holds again (delete before inserting).
    public let removedSlots: [[UInt8]]
    /// The keys added since the mark, oldest first.
    public let added: [SkippedMessageKeyEntry]
}

extension SessionState {
    /// The changes of the skipped message keys since `markSkippedKeysPersisted(token:)` with
    /// `token`, or `nil` when this session was not marked with it (another copy, a session
    /// loaded from bytes, or more changes than the journal follows): compare in full then.
    @_spi(Storage) @_spi(Testing) public func skippedMessageKeyChanges(since token: UInt64) -> SkippedMessageKeyChanges? {
        guard let changes = ratchet.skippedKeys.changes(since: token) else { return nil }
        return SkippedMessageKeyChanges(
            removedSlots: changes.removed.map { SkippedMessageKeyEntry.slotBytes($0) },
            added: changes.added.map { SkippedMessageKeyEntry(slot: $0.slot, messageKey: $0.messageKey, storedAt: $0.storedAt) })
    }

    /// Records that a store holds exactly this session's skipped keys now, under `token` (a
    /// value the store draws and keeps with what it wrote).
    @_spi(Storage) @_spi(Testing) public mutating func markSkippedKeysPersisted(token: UInt64) {
        ratchet.skippedKeys.markPersisted(token: token)
    }
}

/// What a store that writes only what changed needs to know of a session without copying it:
/// which session it is, how many times it changed, and whether its skipped keys changed since
/// the store marked them (`SessionRecord.sessionSummaries`).
@_spi(Storage) @_spi(Testing) public struct SessionChangeSummary: Sendable {
    /// The session's role (with `baseKey`, what identifies it within its record).
    public let role: SessionState.Role
    /// EK_A of the X3DH run that created the session.
    public let baseKey: X25519.PublicKey
    /// `SessionState.generation`: every change of the session advances it.
    public let generation: UInt64
    /// The token of the last `markSkippedKeysPersisted(token:)`, while its changes are followed.
    public let skippedKeysToken: UInt64?
    /// Whether no skipped key was added or removed since that mark.
    public let skippedKeysUnchanged: Bool

    /// Whether `other` describes the same session (the same role and base key).
    public func isSameSession(as other: SessionChangeSummary) -> Bool { role == other.role && baseKey == other.baseKey }
}

extension SessionRecord {
    /// A summary of the current session (`nil` without one) and of each previous session, in
    /// order, read in place (no session is copied).
    @_spi(Storage) @_spi(Testing) public var sessionSummaries: (current: SessionChangeSummary?, previous: [SessionChangeSummary]) {
        func summary(_ session: borrowing SessionState) -> SessionChangeSummary {
            SessionChangeSummary(
                role: session.role, baseKey: session.baseKey, generation: session.generation,
                skippedKeysToken: session.ratchet.skippedKeys.markToken,
                skippedKeysUnchanged: session.ratchet.skippedKeys.isUnchangedSinceMark)
        }
        // The fields are read through the array's subscript one by one, not through
        // `summary(_:)`: passing an element to a function copied the whole session (every
        // buffer retained), 40 times per commit in a record with 40 previous sessions.
        var previous: [SessionChangeSummary] = []
        previous.reserveCapacity(previousSessions.count)
        for index in previousSessions.indices {
            previous.append(SessionChangeSummary(
                role: previousSessions[index].role, baseKey: previousSessions[index].baseKey,
                generation: previousSessions[index].generation,
                skippedKeysToken: previousSessions[index].ratchet.skippedKeys.markToken,
                skippedKeysUnchanged: previousSessions[index].ratchet.skippedKeys.isUnchangedSinceMark))
        }
        return (currentSession.map { summary($0) }, previous)
    }

    /// The summary of the current session alone (`sessionSummaries.current`).
    @_spi(Storage) @_spi(Testing) public var currentSummary: SessionChangeSummary? {
        currentSession.map {
            SessionChangeSummary(
                role: $0.role, baseKey: $0.baseKey, generation: $0.generation, skippedKeysToken: $0.ratchet.skippedKeys.markToken,
                skippedKeysUnchanged: $0.ratchet.skippedKeys.isUnchangedSinceMark)
        }
    }

    /// Whether this record's previous sessions are the very storage of `other`'s (a copy
    /// neither changed): then they are equal, session for session, without looking at them.
    @_spi(Storage) @_spi(Testing) public func sharesPreviousSessions(with other: SessionRecord) -> Bool {
        guard previousSessions.count == other.previousSessions.count else { return false }
        guard !previousSessions.isEmpty else { return true }
        let mine = previousSessions.withUnsafeBufferPointer { $0.baseAddress }
        let theirs = other.previousSessions.withUnsafeBufferPointer { $0.baseAddress }
        return mine != nil && mine == theirs
    }

    /// Marks the skipped keys of every session as persisted under `token`
    /// (`SessionState.markSkippedKeysPersisted(token:)`).
    @_spi(Storage) @_spi(Testing) public mutating func markSkippedKeysPersisted(token: UInt64) {
        mapSessions(current: true, previousIndices: previousSessions.indices) { $0.markSkippedKeysPersisted(token: token) }
    }

    /// Marks the skipped keys of the current session and of the previous sessions at
    /// `previousIndices` as persisted under `token`; the others keep their marks.
    @_spi(Storage) @_spi(Testing) public mutating func markSkippedKeysPersisted(
        token: UInt64, current: Bool, previousIndices: some Sequence<Int>
    ) {
        mapSessions(current: current, previousIndices: previousIndices) { $0.markSkippedKeysPersisted(token: token) }
    }
}
