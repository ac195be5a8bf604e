/// Mutual exclusion per key for async work: at most one holder per key at a time, waiters
/// served first come, first served; different keys never wait for each other.
///
/// An actor alone is not enough: it is reentrant across `await`, so two calls for the same
/// peer could interleave between loading and storing a session. `SessionManager` holds this
/// lock around each load-run-store sequence. A wait is cancellable: a waiting task that is
/// cancelled stops waiting and throws `SessionError.cancelled`, holding nothing.
actor KeyedAsyncLock<Key: Hashable & Sendable> {
    /// The waiters of one key, first come first served: taking the next is O(1) (a read
    /// position over the array, compacted once half of it was taken); a cancelled waiter is
    /// left as an empty slot that is skipped.
    private struct Waiters {
        private var entries: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>?)] = []
        private var head = 0
        private(set) var count = 0

        mutating func append(_ id: UInt64, _ continuation: CheckedContinuation<Void, any Error>) {
            entries.append((id, continuation))
            count += 1
        }

        mutating func popFirst() -> CheckedContinuation<Void, any Error>? {
            while head < entries.count {
                let next = entries[head].continuation
                head += 1
                if head * 2 >= entries.count {
                    entries.removeFirst(head)
                    head = 0
                }
                if let next {
                    count -= 1
                    return next
                }
            }
            return nil
        }

        /// Takes the waiter `id` out of the queue, if it is still waiting.
        mutating func remove(_ id: UInt64) -> CheckedContinuation<Void, any Error>? {
            guard let index = entries[head...].firstIndex(where: { $0.id == id }), let continuation = entries[index].continuation else {
                return nil
            }
            entries[index].continuation = nil
            count -= 1
            return continuation
        }
    }

    private var held: Set<Key> = []
    private var waiters: [Key: Waiters] = [:]
    private var nextWaiterID: UInt64 = 0

    /// Creates a lock with no key held.
    init() {}

    /// Waits until `key` is free and takes it.
    /// - Throws: `SessionError.cancelled` when the task is cancelled while it waits (the key is
    ///   then not held by it).
    func acquire(_ key: Key) async throws(SessionError) {
        if held.insert(key).inserted { return }
        let id = nextWaiterID
        nextWaiterID += 1
        do {
            // `release` hands the key straight to the first waiter, so it is held on return.
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    waiters[key, default: Waiters()].append(id, continuation)
                }
            } onCancel: {
                Task { await self.cancelWaiter(id, of: key) }
            }
        } catch {
            throw .cancelled
        }
    }

    /// Stops the wait of waiter `id` (its task was cancelled), unless it was served already.
    private func cancelWaiter(_ id: UInt64, of key: Key) {
        guard let continuation = waiters[key]?.remove(id) else { return }
        if waiters[key]?.count == 0 { waiters[key] = nil }
        continuation.resume(throwing: CancellationError())
    }

    /// Releases `key`, handing it to the longest waiter if there is one.
    func release(_ key: Key) {
        // Popped in place (no copy of the queue), so a release is O(1) however many wait.
        if !waiters.isEmpty {
            if let next = waiters[key]?.popFirst() {
                if waiters[key]?.count == 0 { waiters[key] = nil }
                next.resume()
                return
            }
            waiters[key] = nil
        }
        held.remove(key)
    }

    /// Takes every key of `keys` (distinct, in a total order that every caller taking several
    /// keys uses, so that two such calls cannot wait for each other), in one call to the lock:
    /// the free ones at once, a held one after its holders. Equivalent to `acquire` of each in
    /// turn, without a call per key.
    /// - Throws: `SessionError.cancelled` when the task is cancelled while it waits; the keys
    ///   taken so far are released then.
    func acquire(all keys: [Key]) async throws(SessionError) {
        for (index, key) in keys.enumerated() {
            if held.insert(key).inserted { continue }
            do throws(SessionError) {
                try await acquire(key)
            } catch {
                release(all: keys[..<index])
                throw error
            }
        }
    }

    /// Releases every key of `keys` (as `release` of each).
    func release(all keys: some Sequence<Key>) {
        for key in keys { release(key) }
    }

    /// Whether `key` is held now (for tests).
    func isHeld(_ key: Key) -> Bool { held.contains(key) }

    /// The number of tasks waiting for `key` (for tests).
    func waiterCount(_ key: Key) -> Int { waiters[key]?.count ?? 0 }

    /// Runs `body` while holding `key`.
    /// - Throws: `SessionError.cancelled` when cancelled while waiting for `key` (`body` does
    ///   not run), or the error of `body`, after releasing `key`.
    func withLock<Result: Sendable>(
        _ key: Key, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        try await acquire(key)
        do {
            let result = try await body()
            await release(key)
            return result
        } catch {
            await release(key)
            throw error
        }
    }
}
