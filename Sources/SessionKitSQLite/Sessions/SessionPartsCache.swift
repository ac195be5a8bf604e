import Foundation
@_spi(Storage) import SessionKit

/// What the store last read or wrote of each peer device's record, so that a commit writes only
/// the parts that changed (and computes only those: `SessionWritePlan`), and a load returns the
/// record without reading the file.
///
/// Entries are checked against the file inside every write transaction (row id and
/// generation), so a record another process changed is read again, never written over from
/// here; a load that returned an entry another process had replaced ends in a refused commit
/// (`staleState`) and a retry from the file. It holds no secret beyond what the loaded records
/// hold.
final class SessionPartsCache: Sendable {
    /// A session as the file holds it.
    struct StoredPart: Sendable {
        /// Its key within the record (a keyed hash, computed once).
        let stateKey: [UInt8]
        /// Which session it is and its `SessionState.generation` when written or read.
        let summary: SessionChangeSummary
        /// The token its skipped keys were marked with (`SessionState.markSkippedKeysPersisted`).
        let token: UInt64

        /// Its `SessionState.generation` when written or read.
        var generation: UInt64 { summary.generation }
    }

    /// One record's parts as they are in the file.
    struct Entry: Sendable {
        /// The `sessions` row id.
        let recordID: Int64
        /// The generation in the file.
        let generation: UInt64
        /// The record as loaded or committed (with `generation`), each session's skipped keys
        /// marked with its part's token.
        let record: SessionRecord
        /// The current session's part.
        let current: StoredPart?
        /// The previous sessions' parts, in the record's order (most recent first): their
        /// state keys are the `session_orders` row.
        let previous: [StoredPart]
        /// The highest `seq` in `skipped_keys` for the record.
        let maxSequence: Int64

        /// An entry for `record` as the file holds it (just read), its sessions' state keys
        /// `currentKey` and `previousKeys`: every session's skipped keys are marked with a new token.
        init(recordID: Int64, generation: UInt64, record: SessionRecord, currentKey: [UInt8]?, previousKeys: [[UInt8]], maxSequence: Int64) {
            var record = record
            record.generation = generation
            let token = UInt64.random(in: 1 ... UInt64.max)
            record.markSkippedKeysPersisted(token: token)
            let summaries = record.sessionSummaries
            self.init(
                recordID: recordID, generation: generation, record: record,
                current: currentKey.flatMap { key in summaries.current.map { StoredPart(stateKey: key, summary: $0, token: token) } },
                previous: zip(previousKeys, summaries.previous).map { StoredPart(stateKey: $0.0, summary: $0.1, token: token) },
                maxSequence: maxSequence)
        }

        /// An entry from its parts (the record already marked).
        init(recordID: Int64, generation: UInt64, record: SessionRecord, current: StoredPart?, previous: [StoredPart], maxSequence: Int64) {
            self.recordID = recordID
            self.generation = generation
            self.record = record
            self.current = current
            self.previous = previous
            self.maxSequence = maxSequence
        }

        /// Whether the record was read without its previous sessions
        /// (`SessionRecord.omitsPreviousSessions`): only for a call the current session suffices for.
        var isPartial: Bool { record.omitsPreviousSessions }

        /// The previous sessions' state keys, most recent first.
        var previousOrder: [[UInt8]] { previous.map(\.stateKey) }

        /// The part of the session `summary` describes, if this record holds it, with whether
        /// it holds it as a previous one; looked for at `index` among the previous sessions
        /// first (the usual case: nothing moved).
        func part(of summary: SessionChangeSummary, near index: Int?) -> (part: StoredPart, isPrevious: Bool)? {
            if let index, index < previous.count, previous[index].summary.isSameSession(as: summary) { return (previous[index], true) }
            if let current, current.summary.isSameSession(as: summary) { return (current, false) }
            if let found = previous.first(where: { $0.summary.isSameSession(as: summary) }) { return (found, true) }
            return nil
        }
    }

    /// At most this many records are kept (first stored, first out).
    private let entries: BoundedCache<ProtocolAddress, Entry>

    init(capacity: Int = 256) { entries = BoundedCache(capacity: capacity) }

    func entry(for address: ProtocolAddress) -> Entry? { entries.value(for: address) }

    func store(_ entry: Entry, for address: ProtocolAddress) { entries.store(entry, for: address) }

    func remove(_ address: ProtocolAddress) { entries.remove(address) }
}
