/// Mutual exclusion per key for async work: at most one holder per key at a time, waiters
/// served first come, first served; different keys never wait for each other.
///
/// An actor alone is not enough: it is reentrant across `await`, so two calls for the same
/// peer could interleave between loading and storing a session. `SessionManager` holds this
/// lock around each load-run-store sequence. Waiting is not cancellable.
actor KeyedAsyncLock<Key: Hashable & Sendable> {
    /// The waiters of one key, first come first served: taking the next is O(1) (a read
    /// position over the array, compacted once half of it was taken).
    private struct Waiters {
        private var continuations: [CheckedContinuation<Void, Never>] = []
        private var head = 0

        var count: Int { continuations.count - head }

        mutating func append(_ continuation: CheckedContinuation<Void, Never>) { continuations.append(continuation) }

        mutating func popFirst() -> CheckedContinuation<Void, Never>? {
            guard head < continuations.count else { return nil }
            let next = continuations[head]
            head += 1
            if head * 2 >= continuations.count {
                continuations.removeFirst(head)
                head = 0
            }
            return next
        }
    }

    private var held: Set<Key> = []
    private var waiters: [Key: Waiters] = [:]

    /// Creates a lock with no key held.
    init() {}

    /// Waits until `key` is free and takes it.
    func acquire(_ key: Key) async {
        guard held.contains(key) else {
            held.insert(key)
            return
        }
        // `release` hands the key straight to the first waiter, so it is held on return.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiters[key, default: Waiters()].append(continuation)
        }
    }

    /// Releases `key`, handing it to the longest waiter if there is one.
    func release(_ key: Key) {
        // Popped in place (no copy of the queue), so a release is O(1) however many wait.
        guard let next = waiters[key]?.popFirst() else {
            waiters[key] = nil
            held.remove(key)
            return
        }
        if waiters[key]?.count == 0 { waiters[key] = nil }
        next.resume()
    }

    /// Whether `key` is held now (for tests).
    func isHeld(_ key: Key) -> Bool { held.contains(key) }

    /// The number of tasks waiting for `key` (for tests).
    func waiterCount(_ key: Key) -> Int { waiters[key]?.count ?? 0 }

    /// Runs `body` while holding `key`.
    /// - Throws: the error of `body`, after releasing `key`.
    func withLock<Result: Sendable>(
        _ key: Key, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        await acquire(key)
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
