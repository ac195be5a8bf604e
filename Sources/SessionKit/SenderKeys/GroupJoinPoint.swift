/// Where a member device joined our sending chain in a group: SPEC §9's join point, the first
/// iteration of the chain that this device encrypted while the member belonged to the group.
///
/// A group retry notice can make this device re-send logged group messages to the member
/// alone, pairwise; only the messages from its join point on are ever re-sent (what was said on
/// the chain before it was a member stays unread by it), and a member without a join point for
/// the chain gets nothing re-sent. `SessionManager` records the points when it creates or
/// rotates the chain (every member then: the chain's first iteration) and when members are
/// added (the chain's next iteration), and drops a member's point when it is removed.
public struct GroupJoinPoint: Sendable, Hashable, CustomStringConvertible {
    /// The id (32 bytes) of our sending chain the point belongs to (SPEC §5).
    public let chainID: [UInt8]
    /// The first iteration encrypted on that chain while the member belonged to the group.
    public let iteration: UInt64

    /// A join point.
    public init(chainID: [UInt8], iteration: UInt64) {
        self.chainID = chainID
        self.iteration = iteration
    }

    /// The iteration (the chain id is not shown).
    public var description: String { "GroupJoinPoint(iteration: \(iteration))" }
}
