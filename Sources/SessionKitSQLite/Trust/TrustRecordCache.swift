import Foundation
import Verification

/// The trust records the store last read for its trust decisions, so that a message's decision
/// (`SQLiteProtocolStore.evaluateIdentity`) does not read the file.
///
/// Each entry keeps the sealed value the record was read from (or that the user had no row).
/// Every commit that stores a session of the user compares it with the file inside its write
/// transaction (one indexed read in a transaction it opens anyway): when another process
/// changed the record, the commit is refused as stale, the entry dropped, and the manager runs
/// the call again on the record read anew. So a decision on a cached record is never committed
/// after the record changed. The store's own trust writes drop the entry. It holds no secret
/// (trust records hold public keys and statuses).
final class TrustRecordCache: @unchecked Sendable {
    /// A user's record as the file held it.
    struct Entry: Sendable {
        /// The sealed `trust_users` value (`nil`: the user had no row).
        let sealed: Data?
        /// The record it opens to.
        let record: TrustRecord?
    }

    private let lock = NSLock()
    private var entries: [TrustUserID: Entry] = [:]
    private var order: [TrustUserID] = []
    /// At most this many users are kept (first stored, first out).
    private let capacity: Int

    init(capacity: Int = 1024) { self.capacity = capacity }

    func entry(for user: TrustUserID) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        return entries[user]
    }

    func store(_ entry: Entry, for user: TrustUserID) {
        lock.lock()
        defer { lock.unlock() }
        if entries.updateValue(entry, forKey: user) == nil { order.append(user) }
        if order.count > capacity {
            let evicted = order.removeFirst()
            entries[evicted] = nil
        }
    }

    func remove(_ user: TrustUserID) {
        lock.lock()
        defer { lock.unlock() }
        if entries.removeValue(forKey: user) != nil { order.removeAll { $0 == user } }
    }
}
