import SessionKit

/// Group members and pending group messages (`StoreConformanceRule.groupMembers`,
/// `.pendingGroupMessages`).
enum GroupRules {
    static func members(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let one = try await f.group("conformance-members-1")
        let two = try await f.group("conformance-members-2")
        let a = try await address("conformance-a", c)
        let b = try await address("conformance-b", c)
        let d = try await address("conformance-d", c)
        func expectMembers(_ group: GroupID, _ expected: Set<ProtocolAddress>, _ when: String) async throws(StoreConformanceFailure) {
            let members = try await c.run("loading the members of \(group)") { try await f.store.loadGroupMembers(for: group) }
            try c.expect(members == expected, "\(when), \(group) has \(members.count) members that are not the \(expected.count) expected")
        }
        try await expectMembers(one, [], "in a new store")
        try await commitMembers([a, b], one, f)
        try await expectMembers(one, [a, b], "after setting 2 members")
        try await expectMembers(two, [], "after setting the members of another group")
        try await commitMembers([d], one, f)
        try await expectMembers(one, [d], "after replacing the members")
        try await commitMembers([a], two, f)
        try await expectMembers(two, [a], "after setting the members of the second group")
        try await expectMembers(one, [d], "after setting the members of the second group")
        try await commitMembers([], one, f)
        try await expectMembers(one, [], "after setting no members")
        try await expectMembers(two, [a], "after emptying the other group")
    }

    static func pendingMessages(_ f: Fixture) async throws(StoreConformanceFailure) {
        let c = f.checker
        let group = try await f.group("conformance-pending-1")
        let otherGroup = try await f.group("conformance-pending-2")
        let a = try await address("conformance-a", c)
        let b = try await address("conformance-b", c)
        let d = try await address("conformance-d", c)
        let start: Int64 = 1_700_000_000
        func keep(_ bytes: [UInt8], _ group: GroupID, _ sender: ProtocolAddress, expiresAt: Int64) async throws(StoreConformanceFailure) {
            var commit = StoreCommit()
            commit.pendingGroupMessage = PendingGroupMessage(
                id: 0, group: group, sender: sender, message: bytes, expiresAt: Timestamp(secondsSince1970: expiresAt))
            try await c.run("a commit of a pending message") { try await f.store.commit(commit) }
        }
        func pending(_ group: GroupID, _ sender: ProtocolAddress) async throws(StoreConformanceFailure) -> [PendingGroupMessage] {
            try await c.run("loading pending messages") { try await f.store.loadPendingGroupMessages(for: group, sender: sender) }
        }
        try await keep([1], group, a, expiresAt: start + 100)
        try await keep([2], group, a, expiresAt: start + 200)
        try await keep([3], group, b, expiresAt: start + 300)
        try await keep([4], otherGroup, a, expiresAt: start + 50)
        let fromA = try await pending(group, a)
        try c.expect(fromA.map(\.message) == [[1], [2]], "the pending messages of one sender load as \(fromA.count), not the 2 kept, oldest first")
        try c.expect(fromA.allSatisfy { $0.group == group && $0.sender == a }, "pending messages load with another group or sender")
        try c.expect(fromA[0].id < fromA[1].id, "pending message ids do not increase in the order the messages were kept")
        try c.expect(fromA.map(\.expiresAt.secondsSince1970) == [start + 100, start + 200], "pending messages load with other expiry times")
        let fromB = try await pending(group, b)
        try c.expect(fromB.map(\.message) == [[3]], "another sender's pending messages load as \(fromB.count), not 1")
        let inOther = try await pending(otherGroup, a)
        try c.expect(inOther.map(\.message) == [[4]], "another group's pending messages load as \(inOther.count), not 1")

        var release = StoreCommit()
        release.releasedPendingGroupMessages = [fromA[0].id]
        try await c.run("a commit releasing a pending message") { try await f.store.commit(release) }
        let released = try await pending(group, a)
        try c.expect(released.map(\.message) == [[2]], "after releasing one of 2 pending messages, \(released.count) load (expected the other)")

        var expire = StoreCommit()
        expire.expiringPendingGroupMessages = Timestamp(secondsSince1970: start + 200)
        try await c.run("a commit expiring pending messages") { try await f.store.commit(expire) }
        let expiredA = try await pending(group, a)
        let expiredB = try await pending(group, b)
        let expiredOther = try await pending(otherGroup, a)
        try c.expect(expiredA.isEmpty && expiredOther.isEmpty,
                     "pending messages expiring at or before the commit's expiry time are still kept")
        try c.expect(expiredB.map(\.message) == [[3]], "a pending message expiring after the commit's expiry time was deleted")

        // Beyond the cap per (group, sender), the oldest is dropped.
        let cap = PendingGroupMessage.maximumPerSender
        for index in 0 ... cap {
            try await keep([UInt8(truncatingIfNeeded: index >> 8), UInt8(truncatingIfNeeded: index)], group, d, expiresAt: start + 1_000)
        }
        let capped = try await pending(group, d)
        try c.expect(capped.count == cap, "\(capped.count) pending messages are kept from one sender, expected at most \(cap)")
        try c.expect(capped.first?.message == [0, 1] && capped.last?.message == [UInt8(cap >> 8), UInt8(truncatingIfNeeded: cap)],
                     "beyond \(cap) pending messages from one sender, not the oldest was dropped")
        try c.expect(zip(capped, capped.dropFirst()).allSatisfy { $0.id < $1.id }, "pending message ids do not increase")
        try c.expect((capped.first?.id ?? 0) > fromA[1].id, "ids of later pending messages are not above earlier ones")
        let stillB = try await pending(group, b)
        try c.expect(stillB.map(\.message) == [[3]], "the cap of one sender dropped another sender's pending message")
    }

    private static func commitMembers(_ members: Set<ProtocolAddress>, _ group: GroupID, _ f: Fixture) async throws(StoreConformanceFailure) {
        var commit = StoreCommit()
        commit.store(members: members, for: group)
        try await f.checker.run("a commit of \(members.count) members") { try await f.store.commit(commit) }
    }

    private static func address(_ userID: String, _ c: Checker) async throws(StoreConformanceFailure) -> ProtocolAddress {
        try await c.run("making an address") { try ProtocolAddress(userID: userID, deviceID: 1) }
    }
}
