import Foundation
@_spi(Storage) import SessionKit

/// What the store last read or wrote of each peer device's record, so that a commit writes only
/// the parts that changed, and a load whose row still has the cached generation reads one row.
///
/// Entries are checked against the file on every use (row id and generation, inside the
/// transaction), so a record another process changed is read again, never trusted from here.
/// It holds no secret in clear beyond what the loaded records hold: parts are compared by
/// SHA-256 digests.
final class SessionPartsCache: @unchecked Sendable {
    /// One record's parts as they are in the file.
    struct Entry: Sendable {
        /// The `sessions` row id.
        let recordID: Int64
        /// The generation in the file.
        let generation: UInt64
        /// The record as loaded or committed (with `generation`).
        let record: SessionRecord
        /// The previous sessions' state keys in `session_orders`, most recent first.
        let previousOrder: [[UInt8]]
        /// SHA-256 of each previous session's part in `session_states`, by state key.
        let previousDigests: [[UInt8]: [UInt8]]
        /// The slot hashes of the skipped keys in `skipped_keys`, by state key.
        let slots: [[UInt8]: Set<[UInt8]>]
        /// The highest `seq` in `skipped_keys` for the record.
        let maxSequence: Int64
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
