import SignalPrimitives

/// One group as one member sees it, without a store: our sending chain, and the chains
/// received from every other member, keyed by the member's device address. (`SessionManager`
/// does the same over a `ProtocolStore`.)
///
/// Fan-out: a group message is encrypted once (`encrypt`) and the same bytes go to every
/// member; the chain itself reaches each member once, as `distributionMessage()` sent inside
/// the pairwise session with that device. A value type: every mutating method commits only
/// on success, so a failed `decrypt` or `processDistribution` changes nothing.
///
/// When a member leaves, call `removeMember(_:)` and then `rotateSendingChain(using:)`, and
/// send the new distribution message to the remaining members, so the departed device cannot
/// read later messages.
@_spi(Testing) public struct GroupSession: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The group.
    public let group: GroupID
    /// Our own chain for this group.
    public private(set) var sendingChain: SenderKeySendingChain
    /// What we hold for each member device that has sent us its chain.
    public private(set) var receiverStates: [ProtocolAddress: SenderKeyReceiverState]

    /// A group session for `group`, sent from `localAddress`, with a new random sending chain
    /// (`random`: the system CSPRNG by default).
    /// - Throws: `SessionError.primitive` when libsodium cannot be initialised.
    public init(group: GroupID, localAddress: ProtocolAddress, using random: any RandomSource = SystemRandomSource()) throws(SessionError) {
        self.init(sendingChain: try SenderKeySendingChain(group: group, sender: localAddress, using: random))
    }

    /// A group session around an existing sending chain and receiver states (for example
    /// loaded from storage); the group is the chain's.
    public init(sendingChain: SenderKeySendingChain, receiverStates: [ProtocolAddress: SenderKeyReceiverState] = [:]) {
        group = sendingChain.group
        self.sendingChain = sendingChain
        self.receiverStates = receiverStates
    }

    /// The member devices we hold chains for.
    public var members: [ProtocolAddress] { Array(receiverStates.keys) }

    /// Our chain's distribution message, to send to every member over its pairwise session.
    /// - Throws: `SessionError.chainExhausted` when our chain has no iteration left.
    public func distributionMessage() throws(SessionError) -> SenderKeyDistributionMessage {
        try sendingChain.distributionMessage()
    }

    /// Encrypts `plaintext` once for the whole group.
    /// - Throws: the errors of `SenderKeySendingChain.encrypt(_:)`; on error nothing changes.
    public mutating func encrypt(_ plaintext: [UInt8]) throws(SessionError) -> [UInt8] {
        try sendingChain.encrypt(plaintext)
    }

    /// Replaces our chain with a new random one and returns its distribution message.
    /// - Throws: `SessionError.primitive` when libsodium cannot be initialised.
    public mutating func rotateSendingChain(
        using random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> SenderKeyDistributionMessage {
        let chain = try SenderKeySendingChain(group: group, sender: sendingChain.sender, using: random)
        let distribution = try chain.distributionMessage()
        sendingChain = chain
        return distribution
    }

    /// Adds the chain in a distribution message received from `sender` (over the pairwise
    /// session with `sender`) for this group.
    /// - Throws: the errors of `SenderKeyReceiverState.processDistribution(_:for:)`
    ///   (`unsupportedVersion`, `invalidMessage` also for a distribution of another group,
    ///   `invalidKey`); on error nothing changes.
    public mutating func processDistribution(_ bytes: [UInt8], from sender: ProtocolAddress) throws(SessionError) {
        var state = receiverStates[sender] ?? SenderKeyReceiverState()
        try state.processDistribution(bytes, for: group)
        receiverStates[sender] = state
    }

    /// Decrypts a group message from `sender`.
    /// - Throws: `SessionError.unknownChain` when we hold nothing from `sender`, and the errors
    ///   of `SenderKeyReceiverState.decrypt(_:for:from:)`; on error nothing changes.
    public mutating func decrypt(_ bytes: [UInt8], from sender: ProtocolAddress) throws(SessionError) -> [UInt8] {
        guard var state = receiverStates[sender] else {
            // Still report type and length errors before the missing chain, in SPEC §5's order.
            _ = try SenderKeyMessage(serialized: bytes)
            throw .unknownChain
        }
        let plaintext = try state.decrypt(bytes, for: group, from: sender)
        receiverStates[sender] = state
        return plaintext
    }

    /// Forgets every chain received from `member`. Rotate our own chain afterwards.
    public mutating func removeMember(_ member: ProtocolAddress) {
        receiverStates[member] = nil
    }

    /// A redacted description: our chain's id and the members, never keys.
    public var description: String {
        "GroupSession(sending: \(sendingChain.description), members: \(receiverStates.count))"
    }
    /// A redacted description.
    public var debugDescription: String { description }
}
