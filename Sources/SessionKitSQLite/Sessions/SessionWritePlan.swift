@_spi(Storage) import SessionKit
import SignalPrimitives

/// A session record split into the parts the file keeps, computed before the write
/// transaction so that the transaction only compares and writes.
///
/// The plan follows the change, not the history: measured against what the store last read or
/// wrote of the record (`SessionPartsCache.Entry`, its basis), a previous session that did not
/// change (the same `SessionState.generation`, skipped keys marked with the basis's token) is
/// neither serialized nor hashed, and a changed session's skipped keys are the ones its
/// journal names (`SessionState.skippedMessageKeyChanges(since:)`), each hashed once. Only
/// when the file no longer holds the basis (another process wrote the record) does the
/// transaction fall back to comparing every part (`Part.serialized()`, `Part.allSkippedKeys`).
/// The serialized parts are `SecureBytes`, wiped when the last copy of the plan goes.
struct SessionWritePlan: Sendable {
    /// One session's part.
    struct Part: Sendable {
        /// Its key within the record.
        let stateKey: [UInt8]
        /// Where the session is in the plan's record: `nil` for the current one, else its index
        /// among the previous sessions.
        let previousIndex: Int?
        /// `serializedWithoutSkippedMessageKeys()` (secret), computed for the current session
        /// and every previous session that changed against the basis; `nil` for one that did
        /// not (`serialized(in:)` computes it when the basis turns out to be stale).
        let bytes: SecureBytes?
        /// Whether the basis holds this session as a previous one, unchanged.
        let isUnchangedPrevious: Bool
        /// The token of the basis's part for this session, when the basis holds it (its skipped
        /// keys are then in the file).
        let basisToken: UInt64?
        /// The skipped keys added and removed against the basis, each with its slot hash; `nil`
        /// when they could not be followed (compare all of them with the file).
        let skippedChanges: SkippedChanges?

        /// `serializedWithoutSkippedMessageKeys()`, computed now when the plan did not.
        func serialized(in record: SessionRecord) -> SecureBytes {
            if let bytes { return bytes }
            var serialized = record.withSession(at: previousIndex) { $0.serializedWithoutSkippedMessageKeys() } ?? []
            defer { SecureMemory.zero(&serialized) }
            return SecureBytes(copying: serialized)
        }

        /// Every skipped key of the session, oldest first, each with its slot hash.
        func allSkippedKeys(in record: SessionRecord, sealer: ValueSealer) -> [SkippedKey] {
            (record.withSession(at: previousIndex) { $0.skippedMessageKeyEntries } ?? []).map {
                SkippedKey(slotHash: sealer.rowKey($0.slot, in: .skippedSlot), entry: $0)
            }
        }
    }

    /// The skipped keys one session added and removed since the basis.
    struct SkippedChanges: Sendable {
        /// Slot hashes of the keys removed (deleting one the file does not hold is a no-op).
        let removed: [[UInt8]]
        /// The keys added, oldest first.
        let added: [SkippedKey]

        var isEmpty: Bool { removed.isEmpty && added.isEmpty }
    }

    /// A skipped key and the keyed hash of its slot (its row key).
    struct SkippedKey: Sendable {
        let slotHash: [UInt8]
        let entry: SkippedMessageKeyEntry
    }

    let address: ProtocolAddress
    let names: SessionRowNames
    /// The generation the record was loaded with (the compare-and-swap's expected value).
    let expectedGeneration: UInt64
    let record: SessionRecord
    /// What the parts are measured against: the store's last view of the record, if any.
    let basis: SessionPartsCache.Entry?
    let current: Part?
    /// The previous sessions' parts; empty when `previousAsInBasis` holds.
    let previous: [Part]
    /// Whether the record's previous sessions are the basis's, unchanged (the record shares
    /// their storage: `SessionRecord.sharesPreviousSessions(with:)`), so that none is looked at.
    let previousAsInBasis: Bool

    init(_ write: StoreCommit.SessionWrite, basis: SessionPartsCache.Entry?, sealer: ValueSealer) {
        address = write.address
        names = SessionRowNames(write.address, sealer: sealer)
        expectedGeneration = write.record.generation
        record = write.record
        // A basis at another generation than the record's cannot be the record's origin.
        let basis = basis.flatMap { $0.generation == write.record.generation ? $0 : nil }
        self.basis = basis
        // Sessions are summarized in place (`SessionRecord.sessionSummaries`) and copied only
        // when they changed: a copy retains every buffer of a session, and a record holds up to 41.
        let record = write.record
        // A record without its previous sessions leaves them as the file holds them.
        previousAsInBasis = basis.map { record.omitsPreviousSessions || record.sharesPreviousSessions(with: $0.record) } ?? false
        let summaries = previousAsInBasis
            ? (current: record.currentSummary, previous: []) : record.sessionSummaries
        func part(previousIndex: Int?, summary: SessionChangeSummary) -> Part {
            let stored = basis?.part(of: summary, near: previousIndex)
            if previousIndex != nil, let stored, stored.isPrevious, stored.part.generation == summary.generation,
               summary.skippedKeysToken == stored.part.token, summary.skippedKeysUnchanged {
                return Part(
                    stateKey: stored.part.stateKey, previousIndex: previousIndex, bytes: nil, isUnchangedPrevious: true,
                    basisToken: stored.part.token, skippedChanges: SkippedChanges(removed: [], added: []))
            }
            let session = previousIndex.map { record.previousSessions[$0] } ?? record.currentSession
            let stateKey = stored?.part.stateKey ?? session.map { SQLiteProtocolStore.stateKey(of: $0, sealer: sealer) } ?? []
            var serialized = session?.serializedWithoutSkippedMessageKeys() ?? []
            defer { SecureMemory.zero(&serialized) }
            let changes = stored.flatMap { session?.skippedMessageKeyChanges(since: $0.part.token) }.map { changes in
                SkippedChanges(
                    removed: changes.removedSlots.map { sealer.rowKey($0, in: .skippedSlot) },
                    added: changes.added.map { SkippedKey(slotHash: sealer.rowKey($0.slot, in: .skippedSlot), entry: $0) })
            }
            return Part(
                stateKey: stateKey, previousIndex: previousIndex, bytes: SecureBytes(copying: serialized), isUnchangedPrevious: false,
                basisToken: stored?.part.token, skippedChanges: changes)
        }
        current = summaries.current.map { part(previousIndex: nil, summary: $0) }
        previous = summaries.previous.indices.map { part(previousIndex: $0, summary: summaries.previous[$0]) }
    }
}

extension SessionRecord {
    /// `body` applied in place to the current session (`index` nil) or to the previous one at
    /// `index`; `nil` when there is no such session.
    func withSession<Result>(at index: Int?, _ body: (borrowing SessionState) -> Result) -> Result? {
        if let index { return previousSessions.indices.contains(index) ? body(previousSessions[index]) : nil }
        guard let current = currentSession else { return nil }
        return body(current)
    }
}
