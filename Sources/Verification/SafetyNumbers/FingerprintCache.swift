import Foundation

/// A small least-recently-used cache of one party's fingerprint hash `H[0..<32]`, keyed by
/// (identity key bytes, identifier bytes). A generator has one iteration count, so the count
/// is implied by the cache's owner.
///
/// The local party's half is the same for every contact, so a cache of a few entries halves
/// the cost of showing safety numbers for many contacts. The entries are public values (they
/// are derived from public keys and identifiers only). Thread-safe through a lock.
final class FingerprintCache: @unchecked Sendable {
    private struct Key: Hashable {
        let identityKey: [UInt8]
        let identifier: [UInt8]
    }

    private struct Entry {
        let hash: [UInt8]
        var lastUse: UInt64
    }

    private let capacity: Int
    private let lock = NSLock()
    // Guarded by `lock`.
    private var entries: [Key: Entry] = [:]
    private var clock: UInt64 = 0

    /// A cache holding at most `capacity` (at least 1) entries.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The cached hash for (`identityKey`, `identifier`), or `nil`.
    func hash(identityKey: [UInt8], identifier: [UInt8]) -> [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        let key = Key(identityKey: identityKey, identifier: identifier)
        guard var entry = entries[key] else { return nil }
        clock &+= 1
        entry.lastUse = clock
        entries[key] = entry
        return entry.hash
    }

    /// Stores `hash`, evicting the least recently used entry when full.
    func store(_ hash: [UInt8], identityKey: [UInt8], identifier: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        let key = Key(identityKey: identityKey, identifier: identifier)
        if entries[key] == nil, entries.count >= capacity,
           let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            entries[oldest] = nil
        }
        clock &+= 1
        entries[key] = Entry(hash: hash, lastUse: clock)
    }

    /// The number of cached entries.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}
