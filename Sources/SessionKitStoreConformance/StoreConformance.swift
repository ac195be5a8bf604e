import SessionKit

/// Checks that a `ProtocolStore` keeps the contract `SessionManager` relies on, so that a store
/// written by hand (on Core Data, on a server's database) cannot silently drop the compare and
/// swap of generations, write half a commit, or let a one-time prekey or a replayed prekey
/// message create two sessions.
///
/// Run it from your tests against fresh, empty stores of your implementation (it needs no
/// XCTest: it returns the broken rules, or throws the first):
///
///     let failures = await StoreConformance.failures {
///         try MyCoreDataStore(container: .temporary(), identity: try IdentityKeyPair())
///     }
///     XCTAssertEqual(failures, [])
///
/// Each rule (`StoreConformanceRule`) runs on its own store from `makeStore`, which must
/// return an empty store (no prekeys, sessions, chains, members or pending messages) that
/// serves a local identity. The rules drive `SessionManager`s over the store (with peers on
/// `InMemoryProtocolStore`s) and commit stale, half-stale and replayed `StoreCommit`s
/// directly. A store that also keeps trust records (`appliesIdentityRecords`) is checked
/// without them: the identity writes are not part of these rules.
public enum StoreConformance {
    /// Runs `rules` (every rule by default), each on a new store from `makeStore`, and returns
    /// the broken ones, one failure per rule, in the order of `rules` (empty: the store
    /// conforms). A store that `makeStore` cannot create fails the rule it was made for.
    public static func failures(
        rules: [StoreConformanceRule] = StoreConformanceRule.allCases,
        makeStore: () async throws -> any ProtocolStore
    ) async -> [StoreConformanceFailure] {
        var failures: [StoreConformanceFailure] = []
        for rule in rules {
            do throws(StoreConformanceFailure) {
                try await run(rule, makeStore: makeStore)
            } catch {
                failures.append(error)
            }
        }
        return failures
    }

    /// Runs `rules` (every rule by default) as `failures(rules:makeStore:)` does, stopping at
    /// the first broken one.
    /// - Throws: the `StoreConformanceFailure` of the first broken rule.
    public static func check(
        rules: [StoreConformanceRule] = StoreConformanceRule.allCases,
        makeStore: () async throws -> any ProtocolStore
    ) async throws(StoreConformanceFailure) {
        for rule in rules { try await run(rule, makeStore: makeStore) }
    }

    /// Runs one rule on a new store.
    private static func run(
        _ rule: StoreConformanceRule, makeStore: () async throws -> any ProtocolStore
    ) async throws(StoreConformanceFailure) {
        let checker = Checker(rule: rule)
        let store = try await checker.run("creating the store (makeStore)") { try await makeStore() }
        let fixture = try await Fixture(store: store, checker: checker)
        switch rule {
        case .sessionGenerations: try await SessionRules.generations(fixture)
        case .generationsAfterDeletion: try await SessionRules.generationsAfterDeletion(fixture)
        case .sendingChainGenerations: try await SenderKeyRules.sendingChainGenerations(fixture)
        case .receiverStateGenerations: try await SenderKeyRules.receiverStateGenerations(fixture)
        case .receiverChainIndex: try await SenderKeyRules.receiverChainIndex(fixture)
        case .atomicCommits: try await CommitRules.atomicity(fixture)
        case .preKeyConsumption: try await CommitRules.preKeyConsumption(fixture)
        case .preKeyUpdates: try await CommitRules.preKeyUpdates(fixture)
        case .replayRecords: try await CommitRules.replayRecords(fixture)
        case .groupMembers: try await GroupRules.members(fixture)
        case .pendingGroupMessages: try await GroupRules.pendingMessages(fixture)
        case .recovery: try await RecoveryRules.recovery(fixture)
        }
    }
}

/// A rule of the `ProtocolStore` contract (`ProtocolStore.commit(_:)` and the stores it
/// refines) that `StoreConformance` checks.
public enum StoreConformanceRule: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// A session record is compared and swapped: a copy loaded before another commit, one with
    /// generation 0 over a stored record, or one with a generation ahead of the stored one is
    /// refused with `SessionError.staleState` and changes nothing; the current copy is stored
    /// with its generation + 1.
    case sessionGenerations
    /// After `deleteSession(for:)` (and `removeReceiverState(for:sender:)`), the state written
    /// next starts above every generation the deleted one had, so a copy from before the
    /// deletion is refused (`staleState`) then and later.
    case generationsAfterDeletion
    /// Our sending chain for a group is compared and swapped like a session record.
    case sendingChainGenerations
    /// The chains received from a sender in a group are compared and swapped like a session
    /// record.
    case receiverStateGenerations
    /// `holdsReceiverChain(_:)` answers for the chain ids of the stored receiver states: true
    /// once a distribution's chain is stored, false for other ids and after
    /// `removeReceiverState(for:sender:)`.
    case receiverChainIndex
    /// A commit is one transaction: when one of its parts is stale, none of the others (a
    /// session (or several, for several devices), a sending chain, a receiver state, members, a pending message, released or
    /// expiring pending messages) is written; when none is, all of them are.
    case atomicCommits
    /// A one-time prekey is deleted by the commit of the session it created, in the same
    /// transaction: a second commit that uses it is refused with `SessionError.unknownPreKey`
    /// and writes nothing, and a stale commit that uses it consumes nothing.
    case preKeyConsumption
    /// `updatePreKeys` stores what its update leaves, and nothing when the update throws (its
    /// error is rethrown).
    case preKeyUpdates
    /// The EK_A replay record of a prekey message (`StoreCommit.baseKeyRecord`) is added by the
    /// commit of the session it created, in the same transaction, and
    /// `hasRecordedBaseKey(_:signedPreKeyID:)` finds it from then on; a commit carrying a
    /// record the store holds already is refused with `SessionError.staleState` and writes
    /// nothing (even when its session was deleted meanwhile), so the prekey message is
    /// `duplicateMessage` again; `updatePreKeys` deletes the records of a signed prekey it
    /// replaces, and none when its update throws.
    case replayRecords
    /// A group's members are replaced by the members of a commit (an empty set removes them),
    /// group by group.
    case groupMembers
    /// Pending group messages are kept per (group, sender) oldest first with increasing ids,
    /// at most `PendingGroupMessage.maximumPerSender` (the oldest dropped), and deleted when
    /// released or expired (`expiresAt` at or before the commit's expiry time).
    case pendingGroupMessages
    /// `localRegistrationID()` does not change (SPEC §9), and a session record keeps what the
    /// manager notes in it about recovery (the recovery marks behind the limits on retry
    /// notices: a store that rebuilds records from parts must restore them too).
    case recovery

    /// The rule's name.
    public var description: String { rawValue }
}

/// A rule a store broke, with what was observed (generations, counts and errors; never a
/// key or a stored value).
public struct StoreConformanceFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broken rule.
    public let rule: StoreConformanceRule
    /// What the store did instead.
    public let detail: String

    /// A failure of `rule`.
    public init(rule: StoreConformanceRule, detail: String) {
        self.rule = rule
        self.detail = detail
    }

    /// The rule and what happened.
    public var description: String { "\(rule): \(detail)" }
}
