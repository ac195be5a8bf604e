import SignalPrimitives

/// The persisted form of a `SessionRecord`, in the common envelope of `StateWriter`
/// (`"SKST" || kind 0x07 (sessionRecord) || version || body || checksum`), version 5;
/// versions 2, 3 and 4 are still read.
///
/// Body, version 5 (version 4 is the same with version-4 session bodies, whose skipped keys
/// have no times):
///
///     hasCurrent          bool    0x00 or 0x01, then the current session's body
///     previousCount       u32     ≤ ProtocolLimits.maxPreviousSessions
///     previousCount × a session body, most recent first
///     requiresPostQuantum bool    the device is pinned to post-quantum sessions; must be 0x01
///                                 when a session of the record is post-quantum
///     hasRecoveryMarks    bool    then `RecoveryMarks`' body (SPEC §9 rate limits)
///
/// Each session body is `SessionState`'s body of the same version (see
/// `SessionStatePersistence.swift`), without an envelope of its own. Version 3 is the same
/// without `hasRecoveryMarks`, with version-3 session bodies; version 2 is version 3 without
/// `requiresPostQuantum`, with version-2 session bodies: it loads unpinned (its sessions load
/// as classic, see `SessionState`). All are written back as version 5. Version 1 is
/// `unsupportedVersion`.
/// No two sessions of a record share the same role and EK_A (the prefix's base key). Loading
/// is strict: any violation, in the record or in one of its sessions, a truncated or trailing
/// field or a bad checksum is `SessionError.invalidPayload`, an unknown version
/// `SessionError.unsupportedVersion`. The blob holds secrets: protect it at rest and wipe
/// copies (`SecureMemory.zero`).
///
/// Cost: the blob holds every session of the record, so a store that writes it after each
/// message writes all of them; a store that wants to write less can keep the current session
/// (`SessionState.serialized()`) apart from the previous ones, which change only when a
/// session is promoted, established or archived.
extension SessionRecord {
    /// The persisted-state version this library writes.
    @_spi(Testing) public static let persistenceVersion: UInt8 = 5

    /// The record as a blob (see the layout above).
    public func serialized() -> [UInt8] {
        let sessionBytes = previousSessions.reduce(currentSession?.persistedBodyByteCountEstimate ?? 0) {
            $0 + $1.persistedBodyByteCountEstimate
        }
        var writer = StateWriter(kind: .sessionRecord, version: Self.persistenceVersion,
                                 capacity: StateWriter.envelopeByteCount + 1 + 4 + sessionBytes + 2 + 64)
        writer.write(currentSession != nil)
        currentSession?.encode(into: &writer)
        writer.write(UInt32(truncatingIfNeeded: previousSessions.count))
        for session in previousSessions { session.encode(into: &writer) }
        writer.write(requiresPostQuantum)
        writer.write(!recoveryMarks.isEmpty)
        if !recoveryMarks.isEmpty { recoveryMarks.encode(into: &writer) }
        return writer.finish()
    }

    /// Loads a record from `serialized()`'s blob.
    /// - Throws: `SessionError.invalidPayload` for a malformed or inconsistent blob,
    ///   `SessionError.unsupportedVersion` for an unknown version.
    public init(serialized blob: [UInt8]) throws(SessionError) {
        var reader = try StateReader(blob, kind: .sessionRecord, supportedVersions: SessionState.oldestReadableVersion ... Self.persistenceVersion)
        var seen = Set<SessionIdentity>()
        var current: SessionState?
        if try reader.readBool() {
            let session = try SessionState(decodingFrom: &reader)
            seen.insert(SessionIdentity(session))
            current = session
        }
        let previousCount = try reader.readUInt32()
        guard previousCount <= UInt32(ProtocolLimits.maxPreviousSessions) else { throw .invalidPayload }
        var previous: [SessionState] = []
        for _ in 0 ..< previousCount {
            let session = try SessionState(decodingFrom: &reader)
            guard seen.insert(SessionIdentity(session)).inserted else { throw .invalidPayload }
            previous.append(session)
        }
        var pinned = false
        if reader.version >= 3 {
            pinned = try reader.readBool()
            let holdsPostQuantumSession = current?.isPostQuantum == true || previous.contains { $0.isPostQuantum }
            if holdsPostQuantumSession, !pinned { throw .invalidPayload }
        }
        var marks = RecoveryMarks()
        if reader.version >= 4, try reader.readBool() {
            marks = try RecoveryMarks(decodingFrom: &reader)
            guard !marks.isEmpty else { throw .invalidPayload }
        }
        try reader.finish()
        self.init(currentSession: current, previousSessions: previous, requiresPostQuantum: pinned, recoveryMarks: marks)
    }

    /// What makes a session unique within a record: its role and EK_A.
    private struct SessionIdentity: Hashable {
        let role: SessionState.Role
        let baseKey: X25519.PublicKey

        init(_ session: SessionState) {
            role = session.role
            baseKey = session.baseKey
        }
    }
}
