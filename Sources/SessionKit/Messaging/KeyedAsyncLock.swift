/// Mutual exclusion per key for async work: at most one holder per key at a time, waiters
/// served first come, first served; different keys never wait for each other.
///
/// An actor alone is not enough: it is reentrant across `await`, so two calls for the same
/// peer could interleave between loading and storing a session. `SessionManager` holds this
/// lock around each load-run-store sequence. Waiting is not cancellable.
actor KeyedAsyncLock<Key: Hashable & Sendable> {
    private var held: Set<Key> = []
    private var waiters: [Key: [CheckedContinuation<Void, Never>]] = [:]

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
            waiters[key, default: []].append(continuation)
        }
    }

    /// Releases `key`, handing it to the longest waiter if there is one.
    func release(_ key: Key) {
        guard var queue = waiters[key], !queue.isEmpty else {
            held.remove(key)
            return
        }
        let next = queue.removeFirst()
        waiters[key] = queue.isEmpty ? nil : queue
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
