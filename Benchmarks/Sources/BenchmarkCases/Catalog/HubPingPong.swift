import BenchmarkHarness
import Dispatch

/// One conversation of a hub device with one peer device, in ping-pong: messages alternate
/// hub → peer (the hub encrypts, the peer decrypts) and peer → hub (the peer encrypts, the
/// hub decrypts), so every decryption performs a DH ratchet step.
///
/// The driver (`HubPingPong`) hands each conversation to one child task at a time and joins
/// them before the next batch, so a conversation's state is never used concurrently.
protocol HubConversation: Sendable {
    /// Exchanges `count` 64-byte messages in turn, the first one from the hub when
    /// `hubSendsFirst`, checking each decrypted plaintext; returns the last one decrypted (empty
    /// for `count` = 0).
    func exchange(_ count: Int, hubSendsFirst: Bool) async throws -> [UInt8]
}

/// The workload of the `manager.hub.*` cases: a batch of `n` messages spread over every
/// conversation, all conversations running at once in a task group (each one sequential).
///
/// Conversation `i` gets `n / peers` messages, plus one when `i < n % peers`; it continues in
/// the direction where its previous batch stopped. The contenders (`SessionManager`s, the
/// naive reference sessions) go through the same driver, so the task group and the blocking
/// wait cost both the same.
final class HubPingPong<Conversation: HubConversation> {
    let conversations: [Conversation]
    /// For each conversation, whether its next message goes from the hub to the peer.
    private var hubSendsNext: [Bool]

    /// A driver over established `conversations` whose next message is the hub's.
    init(_ conversations: [Conversation]) {
        self.conversations = conversations
        hubSendsNext = Array(repeating: true, count: conversations.count)
    }

    /// Exchanges `messages` messages over all conversations at once; returns the last
    /// plaintext each conversation decrypted, concatenated in conversation order.
    @discardableResult
    func run(_ messages: Int) throws -> [UInt8] {
        let peers = conversations.count
        guard peers > 0, messages > 0 else { return [] }
        let counts = (0..<peers).map { messages / peers + ($0 < messages % peers ? 1 : 0) }
        let (conversations, starts) = (conversations, hubSendsNext)
        let lasts = try runBlocking { () async throws -> [[UInt8]] in
            try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                for index in 0..<peers where counts[index] > 0 {
                    group.addTask {
                        (index, try await conversations[index].exchange(counts[index], hubSendsFirst: starts[index]))
                    }
                }
                var lasts = [[UInt8]](repeating: [], count: peers)
                for try await (index, last) in group { lasts[index] = last }
                return lasts
            }
        }
        for index in 0..<peers where counts[index] % 2 == 1 { hubSendsNext[index].toggle() }
        return lasts.flatMap { $0 }
    }

    /// The timed workload (`n` messages per batch) and, for the check, one message each way in
    /// every conversation (2 × peers messages, which leaves every direction as it was).
    var probe: Probe {
        Probe(workload: Workload { n in _ = try self.run(n) }, output: { try self.run(2 * self.conversations.count) })
    }
}

/// Runs `body` to completion on the concurrency runtime's global executor and returns its
/// result, blocking the calling thread until then: the harness times synchronous batches, and
/// `SessionManager`'s API is async.
///
/// Call it only from a thread outside the cooperative pool (the `bench` executable's main
/// thread, an XCTest method), never from inside a task: the pool has one thread per core, and
/// a blocked pool thread is one fewer to run `body`.
func runBlocking<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
    let outcome = BlockingOutcome<Value>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            outcome.value = .success(try await body())
        } catch {
            outcome.value = .failure(error)
        }
        done.signal()
    }
    done.wait()
    guard let value = outcome.value else { throw CheckFailure("runBlocking: the task ended without a result") }
    return try value.get()
}

/// The result of a `runBlocking` task: written once by the task before it signals the
/// semaphore, read by the waiting thread only after the wait returned (the semaphore orders
/// the two), hence `@unchecked Sendable`.
private final class BlockingOutcome<Value>: @unchecked Sendable {
    var value: Result<Value, any Error>?
}
