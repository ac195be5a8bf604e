import SignalPrimitives

/// The age limit of skipped message keys (`SessionConfiguration.skippedKeyMaxAge`): each key
/// carries the time it was stored, and keys older than the limit are deleted when a message
/// from the peer is decrypted.
extension SessionState {
    /// Whether `ageSkippedKeys(now:maxAge:)` would change this session: a key not stamped
    /// yet, or one stored before `now − maxAge`. O(1) in the number of keys held, except over
    /// keys removed since the last compaction.
    func skippedKeysNeedAgeing(now: Timestamp, maxAge: Int64) -> Bool {
        let keys = ratchet.skippedKeys
        guard !keys.isEmpty else { return false }
        return keys.holdsUnstampedKeys || keys.holdsKeysStored(before: Self.cutoff(now, maxAge))
    }

    /// Stamps the skipped keys not stamped yet with `now` and deletes those stored before
    /// `now − maxAge`. Advances `generation` when a key was deleted (the session changed;
    /// stamping alone leaves it: a store writes the times of the keys it adds).
    mutating func ageSkippedKeys(now: Timestamp, maxAge: Int64) {
        ratchet.skippedKeys.stamp(now.secondsSince1970)
        if ratchet.skippedKeys.removeStored(before: Self.cutoff(now, maxAge)) > 0, generation < UInt64.max { generation += 1 }
    }

    private static func cutoff(_ now: Timestamp, _ maxAge: Int64) -> Int64 {
        now.secondsSince1970 > Int64.min + maxAge ? now.secondsSince1970 - maxAge : Int64.min
    }
}

extension SessionRecord {
    /// Ages the skipped keys of every session of the record (`SessionState.ageSkippedKeys`),
    /// touching only the sessions that need it (so a record whose previous sessions have
    /// nothing to stamp or delete is not copied).
    mutating func ageSkippedKeys(now: Timestamp, maxAge: Int64) {
        let current = currentSession?.skippedKeysNeedAgeing(now: now, maxAge: maxAge) ?? false
        let previous = previousSessions.indices.filter { previousSessions[$0].skippedKeysNeedAgeing(now: now, maxAge: maxAge) }
        guard current || !previous.isEmpty else { return }
        mapSessions(current: current, previousIndices: previous) { $0.ageSkippedKeys(now: now, maxAge: maxAge) }
    }
}
