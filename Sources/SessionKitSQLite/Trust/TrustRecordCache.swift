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
final class TrustRecordCache: Sendable {
    /// A user's record as the file held it.
    struct Entry: Sendable {
        /// The sealed `trust_users` value (`nil`: the user had no row).
        let sealed: Data?
        /// The record it opens to.
        let record: TrustRecord?
    }

    /// At most this many users are kept (first stored, first out).
    private let entries: BoundedCache<TrustUserID, Entry>

    init(capacity: Int = 1024) { entries = BoundedCache(capacity: capacity) }

    func entry(for user: TrustUserID) -> Entry? { entries.value(for: user) }

    func store(_ entry: Entry, for user: TrustUserID) { entries.store(entry, for: user) }

    func remove(_ user: TrustUserID) { entries.remove(user) }
}
