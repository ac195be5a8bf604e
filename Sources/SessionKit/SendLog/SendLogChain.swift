/// A chain the send log files entries under (SPEC §9: "per device and chain position"): for a
/// pairwise message the recipient device and the ratchet key it was sent on (header.dh), for a
/// group message the group and our sender-key chain's id. An entry's position in its chain is
/// the message's counter (header.n) or iteration.
public enum SendLogChain: Sendable, Hashable, CustomStringConvertible {
    /// A pairwise chain: the recipient device and the public ratchet key (32 bytes) of the
    /// sending chain.
    case pairwise(recipient: ProtocolAddress, ratchetKey: [UInt8])
    /// A group chain: the group and the chain id (32 bytes) of our sending chain.
    case group(GroupID, chainID: [UInt8])

    /// The bytes that identify the chain, for a store's keyed hash:
    /// `0x01 || Encode(recipient) || ratchetKey` or `0x02 || Encode(group) || chainID`.
    public var identifyingBytes: [UInt8] {
        switch self {
        case let .pairwise(recipient, ratchetKey): return [0x01] + recipient.encoded + ratchetKey
        case let .group(group, chainID): return [0x02] + group.encoded + chainID
        }
    }

    /// The recipient or the group (the keys are not shown).
    public var description: String {
        switch self {
        case let .pairwise(recipient, _): return "pairwise(\(recipient))"
        case let .group(group, _): return "group(\(group))"
        }
    }
}
