import SignalPrimitives

/// The message keys of skipped messages (SPEC §4), stored under (ratchet key, counter) in
/// insertion order, which is age order: when more than `maxStored` keys are held, the oldest
/// inserted is evicted first.
///
/// Lookup and removal are O(1); eviction is amortised O(1). Removed keys leave a stale entry
/// in the age queue, skipped over during eviction and dropped by periodic compaction.
///
/// Each key carries the time it was stored (seconds since 1970; 0 until `stamp(_:)` gives it
/// one), so that keys older than a limit are deleted too (`removeStored(before:)`): in age
/// order the times never decrease, so both walk only the keys they change.
struct SkippedMessageKeys: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Where a skipped key belongs: the sender's ratchet key (DHr then) and the message number.
    struct Slot: Hashable, Sendable {
        /// The ratchet public key of the chain.
        let ratchetKey: X25519.PublicKey
        /// The message number in that chain.
        let counter: UInt32
    }

    private struct Entry: Sendable {
        let messageKey: MessageKey
        let sequence: UInt64
        /// When the key was stored (seconds since 1970), 0 until stamped.
        var storedAt: Int64
    }

    private var entries: [Slot: Entry] = [:]
    /// How many keys are held under each ratchet key (so that "does this session know the
    /// ratchet key" is one lookup, SPEC §3).
    private var countByRatchetKey: [X25519.PublicKey: Int] = [:]
    /// Insertion order from `head` on; an item is live when its sequence matches `entries`.
    private var ageQueue: [(slot: Slot, sequence: UInt64)] = []
    private var head = 0
    private var nextSequence: UInt64 = 0
    /// What changed since a store last persisted the keys (`markPersisted(token:)`), or `nil`
    /// when nothing was marked or too much changed to be worth following.
    private var journal: Journal?

    /// The changes since a mark: the slots removed (used, evicted, or replaced) and, through
    /// `baseSequence`, the keys added. Never persisted: a value loaded from bytes has none.
    private struct Journal: Sendable {
        let token: UInt64
        let baseSequence: UInt64
        var removed: [Slot] = []
    }

    /// At most this many removals are followed after a mark; beyond, the journal is dropped and
    /// a store compares the keys in full (a store that never marks keeps no journal at all).
    static let journalLimit = 4096

    /// An empty store.
    init() {}

    /// The number of keys held.
    var count: Int { entries.count }

    /// Whether no key is held.
    var isEmpty: Bool { entries.isEmpty }

    /// The key stored for `slot`, if any.
    func messageKey(for slot: Slot) -> MessageKey? { entries[slot]?.messageKey }

    /// When the key for `slot` was stored (0: not stamped yet), if it is held.
    func storedAt(_ slot: Slot) -> Int64? { entries[slot]?.storedAt }

    /// Gives the keys not stamped yet (those added since the last stamp, or loaded without a
    /// time) the time `now` (seconds since 1970). Walks from the newest key back to the first
    /// one stamped.
    mutating func stamp(_ now: Int64) {
        var index = ageQueue.count
        while index > head {
            index -= 1
            let (slot, sequence) = ageQueue[index]
            guard let entry = entries[slot], entry.sequence == sequence else { continue }
            guard entry.storedAt == 0 else { break }
            entries[slot]?.storedAt = max(now, 1)
        }
    }

    /// Deletes the keys stamped before `cutoff` (seconds since 1970), oldest first; returns how
    /// many. Stops at the first key stamped at or after it, or not stamped.
    @discardableResult
    mutating func removeStored(before cutoff: Int64) -> Int {
        var removed = 0
        while head < ageQueue.count {
            let (slot, sequence) = ageQueue[head]
            guard let entry = entries[slot], entry.sequence == sequence else {
                head += 1
                continue
            }
            guard entry.storedAt != 0, entry.storedAt < cutoff else { break }
            head += 1
            entries.removeValue(forKey: slot)
            forget(slot.ratchetKey)
            journalRemoval(slot)
            removed += 1
        }
        if entries.isEmpty {
            ageQueue.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > ageQueue.count {
            compact()
        }
        return removed
    }

    /// Whether the newest key held is not stamped yet (`stamp(_:)` would change something).
    var holdsUnstampedKeys: Bool {
        var index = ageQueue.count
        while index > head {
            index -= 1
            let (slot, sequence) = ageQueue[index]
            guard let entry = entries[slot], entry.sequence == sequence else { continue }
            return entry.storedAt == 0
        }
        return false
    }

    /// Whether the oldest key held was stamped before `cutoff` (`removeStored(before:)` would
    /// delete something).
    func holdsKeysStored(before cutoff: Int64) -> Bool {
        for (slot, sequence) in ageQueue[head...] {
            guard let entry = entries[slot], entry.sequence == sequence else { continue }
            return entry.storedAt != 0 && entry.storedAt < cutoff
        }
        return false
    }

    /// Whether any key is held under `ratchetKey`, whatever its counter.
    func holdsKeys(for ratchetKey: X25519.PublicKey) -> Bool { countByRatchetKey[ratchetKey] != nil }

    private mutating func forget(_ ratchetKey: X25519.PublicKey) {
        guard let count = countByRatchetKey[ratchetKey] else { return }
        countByRatchetKey[ratchetKey] = count > 1 ? count - 1 : nil
    }

    /// Removes the key stored for `slot` (after it decrypted its message).
    mutating func remove(_ slot: Slot) {
        guard entries.removeValue(forKey: slot) != nil else { return }
        forget(slot.ratchetKey)
        journalRemoval(slot)
        if entries.isEmpty {
            ageQueue.removeAll(keepingCapacity: true)
            head = 0
        } else if ageQueue.count - head > 2 * entries.count + 64 {
            compact()
        }
    }

    /// Appends keys as the newest, in the given order, then evicts the oldest while more than
    /// `maxStored` are held. A key for a slot already held replaces it (as the newest).
    /// `storedAt` gives each key's time (seconds since 1970, 0 for none: stamped later), or
    /// `nil` for none of them.
    mutating func append(_ keys: [(slot: Slot, messageKey: MessageKey)], maxStored: Int, storedAt: [Int64]? = nil) {
        guard !keys.isEmpty else { return }
        entries.reserveCapacity(entries.count + keys.count)
        ageQueue.reserveCapacity(ageQueue.count + keys.count)
        for (index, (slot, key)) in keys.enumerated() {
            let time = storedAt.flatMap { index < $0.count ? $0[index] : nil } ?? 0
            if entries.updateValue(Entry(messageKey: key, sequence: nextSequence, storedAt: max(time, 0)), forKey: slot) == nil {
                countByRatchetKey[slot.ratchetKey, default: 0] += 1
            } else {
                journalRemoval(slot)
            }
            ageQueue.append((slot, nextSequence))
            nextSequence &+= 1
        }
        while entries.count > max(maxStored, 0), head < ageQueue.count {
            let (slot, sequence) = ageQueue[head]
            head += 1
            if entries[slot]?.sequence == sequence {
                entries.removeValue(forKey: slot)
                forget(slot.ratchetKey)
                journalRemoval(slot)
            }
        }
        if head > 64, head * 2 > ageQueue.count { compact() }
    }

    /// The keys held, oldest first.
    var inAgeOrder: [(slot: Slot, messageKey: MessageKey)] {
        var out: [(slot: Slot, messageKey: MessageKey)] = []
        out.reserveCapacity(entries.count)
        for (slot, sequence) in ageQueue[head...] {
            if let entry = entries[slot], entry.sequence == sequence { out.append((slot, entry.messageKey)) }
        }
        return out
    }

    /// The times of the keys held, oldest first (as `inAgeOrder`; 0: not stamped).
    var storedTimesInAgeOrder: [Int64] {
        var out: [Int64] = []
        out.reserveCapacity(entries.count)
        for (slot, sequence) in ageQueue[head...] {
            if let entry = entries[slot], entry.sequence == sequence { out.append(entry.storedAt) }
        }
        return out
    }

    // MARK: Changes since a store persisted the keys

    /// Records that a store holds exactly these keys now, under `token` (a value the store
    /// draws); `changes(since:)` then reports what changed after this point.
    mutating func markPersisted(token: UInt64) {
        journal = Journal(token: token, baseSequence: nextSequence)
    }

    /// The keys removed and added since `markPersisted(token:)` with this `token`, or `nil`
    /// when this value was not marked with it (or the journal was dropped). `removed` may name
    /// slots that were added after the mark and are not in the store (deleting them is a
    /// no-op) and slots that are added again (in `added`: delete before inserting); `added` is
    /// oldest first.
    func changes(since token: UInt64) -> (removed: [Slot], added: [(slot: Slot, messageKey: MessageKey, storedAt: Int64)])? {
        guard let journal, journal.token == token else { return nil }
        var added: [(slot: Slot, messageKey: MessageKey, storedAt: Int64)] = []
        var index = ageQueue.count
        while index > head, ageQueue[index - 1].sequence >= journal.baseSequence { index -= 1 }
        for (slot, sequence) in ageQueue[index...] {
            if let entry = entries[slot], entry.sequence == sequence { added.append((slot, entry.messageKey, entry.storedAt)) }
        }
        return (journal.removed, added)
    }

    /// The token of the last `markPersisted(token:)`, while its journal is followed.
    var markToken: UInt64? { journal?.token }

    /// Whether nothing was added or removed since the last mark (false without a journal).
    var isUnchangedSinceMark: Bool { journal.map { $0.removed.isEmpty && nextSequence == $0.baseSequence } ?? false }

    private mutating func journalRemoval(_ slot: Slot) {
        guard journal != nil else { return }
        if journal?.removed.count ?? 0 >= Self.journalLimit {
            journal = nil
        } else {
            journal?.removed.append(slot)
        }
    }

    private mutating func compact() {
        ageQueue = ageQueue[head...].filter { entries[$0.slot]?.sequence == $0.sequence }
        head = 0
    }

    /// A redacted description: the number of keys only.
    var description: String { "SkippedMessageKeys(\(count) keys, redacted)" }
    /// A redacted description: the number of keys only.
    var debugDescription: String { description }
}
