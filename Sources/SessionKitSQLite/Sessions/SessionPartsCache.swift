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
final class SessionPartsCache: @unchecked Sendable {
    /// A session's identity within its record: its role and base key (the input of its state key).
    struct SessionIdentity: Hashable, Sendable {
        let role: UInt8
        let baseKey: [UInt8]

        init(_ session: SessionState) {
            role = session.role.rawValue
            baseKey = session.baseKey.rawRepresentation
        }
    }

    /// A session as the file holds it.
    struct StoredPart: Sendable {
        /// Its `SessionState.generation` when written or read.
        let generation: UInt64
        /// The token its skipped keys were marked with (`SessionState.markSkippedKeysPersisted`).
        let token: UInt64
        /// Whether it is a previous session (a `session_states` row), not the current one.
        let isPrevious: Bool
    }

    /// One record's parts as they are in the file.
    struct Entry: Sendable {
        /// The `sessions` row id.
        let recordID: Int64
        /// The generation in the file.
        let generation: UInt64
        /// The record as loaded or committed (with `generation`), its sessions' skipped keys
        /// marked with their parts' tokens.
        let record: SessionRecord
        /// The previous sessions' state keys in `session_orders`, most recent first.
        let previousOrder: [[UInt8]]
        /// Every session of the record, by state key.
        let parts: [[UInt8]: StoredPart]
        /// The state key of every session of the record (a keyed hash, computed once).
        let stateKeys: [SessionIdentity: [UInt8]]
        /// The highest `seq` in `skipped_keys` for the record.
        let maxSequence: Int64

        /// An entry for `record` as the file now holds it, marking every session's skipped keys
        /// with a new token.
        init(
            recordID: Int64, generation: UInt64, record: SessionRecord, stateKeys: [SessionIdentity: [UInt8]], maxSequence: Int64
        ) {
            var record = record
            record.generation = generation
            let token = UInt64.random(in: 1 ... UInt64.max)
            record.markSkippedKeysPersisted(token: token)
            var parts: [[UInt8]: StoredPart] = [:]
            var order: [[UInt8]] = []
            if let current = record.currentSession, let key = stateKeys[SessionIdentity(current)] {
                parts[key] = StoredPart(generation: current.generation, token: token, isPrevious: false)
            }
            for session in record.previousSessions {
                guard let key = stateKeys[SessionIdentity(session)] else { continue }
                parts[key] = StoredPart(generation: session.generation, token: token, isPrevious: true)
                order.append(key)
            }
            self.recordID = recordID
            self.generation = generation
            self.record = record
            self.previousOrder = order
            self.parts = parts
            self.stateKeys = stateKeys
            self.maxSequence = maxSequence
        }
    }

    private let lock = NSLock()
    private var entries: [ProtocolAddress: Entry] = [:]
    /// At most this many records are kept (least recently stored first out).
    private let capacity: Int
    private var order: [ProtocolAddress] = []

    init(capacity: Int = 256) { self.capacity = capacity }

    func entry(for address: ProtocolAddress) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        return entries[address]
    }

    func store(_ entry: Entry, for address: ProtocolAddress) {
        lock.lock()
        defer { lock.unlock() }
        if entries.updateValue(entry, forKey: address) == nil { order.append(address) }
        if order.count > capacity {
            let evicted = order.removeFirst()
            entries[evicted] = nil
        }
    }

    func remove(_ address: ProtocolAddress) {
        lock.lock()
        defer { lock.unlock() }
        if entries.removeValue(forKey: address) != nil { order.removeAll { $0 == address } }
    }
}
