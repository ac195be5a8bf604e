import Foundation

/// A thread-safe map of at most `capacity` entries, first stored, first out: storing a new key
/// when full evicts the key stored earliest (replacing a key's value keeps its place). The
/// store's in-memory caches (`SessionPartsCache`, `TrustRecordCache`) keep their entries here.
///
/// Every operation is O(1) (amortized for eviction): each key is stamped with the sequence
/// number of its insertion, and the insertion order is a map from stamp to key, so a removal
/// deletes one stamp instead of searching a list; eviction skips the stamps already removed.
final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var entries: [Key: (value: Value, stamp: UInt64)] = [:]
    /// The keys by insertion stamp; stamps of removed keys are absent.
    private var order: [UInt64: Key] = [:]
    /// The stamp of the next insertion.
    private var nextStamp: UInt64 = 0
    /// No key present has a stamp below this one.
    private var oldestStamp: UInt64 = 0
    /// At most this many entries are kept.
    let capacity: Int

    /// A cache of at most `capacity` entries.
    init(capacity: Int) { self.capacity = capacity }

    /// The value stored for `key`, if any.
    func value(for key: Key) -> Value? {
        lock.lock()
        defer { lock.unlock() }
        return entries[key]?.value
    }

    /// Stores `value` for `key`; a new key may evict the earliest stored one.
    func store(_ value: Value, for key: Key) {
        lock.lock()
        defer { lock.unlock() }
        if let existing = entries[key] {
            entries[key] = (value, existing.stamp)
            return
        }
        entries[key] = (value, nextStamp)
        order[nextStamp] = key
        nextStamp += 1
        while entries.count > capacity {
            if let evicted = order.removeValue(forKey: oldestStamp) { entries[evicted] = nil }
            oldestStamp += 1
        }
    }

    /// Forgets `key`.
    func remove(_ key: Key) {
        lock.lock()
        defer { lock.unlock() }
        if let removed = entries.removeValue(forKey: key) { order[removed.stamp] = nil }
    }

    /// The number of entries.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}
