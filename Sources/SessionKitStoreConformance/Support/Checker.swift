import SessionKit

/// The expectations of one rule: each one that does not hold becomes the rule's
/// `StoreConformanceFailure`.
struct Checker: Sendable {
    /// The rule being checked.
    let rule: StoreConformanceRule

    /// A failure of the rule.
    func failure(_ detail: String) -> StoreConformanceFailure { StoreConformanceFailure(rule: rule, detail: detail) }

    /// Fails unless `condition` holds.
    func expect(_ condition: Bool, _ detail: @autoclosure () -> String) throws(StoreConformanceFailure) {
        guard condition else { throw failure(detail()) }
    }

    /// Runs a step that must succeed (`what` names it in the failure).
    func run<T>(_ what: String, _ body: () async throws -> T) async throws(StoreConformanceFailure) -> T {
        do {
            return try await body()
        } catch {
            throw failure("\(what) failed: \(error)")
        }
    }

    /// Runs a step that must fail with `expected`.
    func refuses(_ expected: SessionError, _ what: String, _ body: () async throws -> Void) async throws(StoreConformanceFailure) {
        do {
            try await body()
        } catch let error as SessionError {
            guard error == expected else { throw failure("\(what) failed with \(error), expected \(expected)") }
            return
        } catch {
            throw failure("\(what) failed with \(error), expected \(expected)")
        }
        throw failure("\(what) was accepted, expected \(expected)")
    }

    /// Commits `commit`, which must be refused with `expected`, and checks that the store looks
    /// the same afterwards as before through `view`.
    func refusesCommit(
        _ commit: StoreCommit, with expected: SessionError, _ what: String, on store: any ProtocolStore,
        unchanged view: () async throws(StoreConformanceFailure) -> StoreView
    ) async throws(StoreConformanceFailure) {
        let before = try await view()
        try await refuses(expected, what) { try await store.commit(commit) }
        let after = try await view()
        try expect(after == before, "\(what) was refused but changed the store: \(before.difference(to: after))")
    }
}

/// What a store holds for some addresses, groups and senders, to tell whether a refused commit
/// changed anything. Stored values are compared as their serialized bytes, never printed.
struct StoreView: Equatable, Sendable {
    /// A named stored value: its generation (when it has one) and its bytes.
    struct Entry: Equatable, Sendable {
        let name: String
        let generation: UInt64?
        let bytes: [UInt8]?
    }

    var entries: [Entry] = []

    /// The names of the entries that differ (for a failure's detail).
    func difference(to other: StoreView) -> String {
        let changed = zip(entries, other.entries).filter { $0 != $1 }.map { old, new in
            old.generation != new.generation
                ? "\(old.name) (generation \(old.generation.map(String.init) ?? "none") → \(new.generation.map(String.init) ?? "none"))"
                : "\(old.name)"
        }
        return changed.isEmpty ? "its contents" : changed.joined(separator: ", ")
    }

    /// Reads the session records of `sessions`, the prekeys, the sending chains and members of
    /// `groups`, and the receiver states and pending messages of `senders` in `groups`.
    static func read(
        _ store: any ProtocolStore, checker: Checker, sessions: [ProtocolAddress] = [], groups: [GroupID] = [],
        senders: [ProtocolAddress] = []
    ) async throws(StoreConformanceFailure) -> StoreView {
        try await checker.run("reading the store") { () async throws -> StoreView in
            var view = StoreView()
            for address in sessions {
                let record = try await store.loadSession(for: address)
                view.entries.append(Entry(name: "the session record of \(address)", generation: record?.generation, bytes: record?.serialized()))
            }
            view.entries.append(Entry(name: "the prekeys", generation: nil, bytes: try await store.loadPreKeys()?.serialized()))
            for group in groups {
                let chain = try await store.loadSendingChain(for: group)
                view.entries.append(Entry(name: "the sending chain of \(group)", generation: chain?.generation, bytes: chain?.serialized()))
                let members = try await store.loadGroupMembers(for: group).map(\.description).sorted()
                view.entries.append(Entry(name: "the members of \(group)", generation: nil, bytes: Array(members.joined(separator: "\n").utf8)))
                for sender in senders {
                    let state = try await store.loadReceiverState(for: group, sender: sender)
                    view.entries.append(Entry(
                        name: "the receiver state of \(sender) in \(group)", generation: state?.generation, bytes: state?.serialized()))
                    let pending = try await store.loadPendingGroupMessages(for: group, sender: sender)
                    var bytes: [UInt8] = []
                    for message in pending {
                        bytes += Array("\(message.id) \(message.expiresAt.secondsSince1970) \(message.message.count):".utf8) + message.message
                    }
                    view.entries.append(Entry(name: "the pending messages of \(sender) in \(group)", generation: nil, bytes: bytes))
                }
            }
            return view
        }
    }
}
