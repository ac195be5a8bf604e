/// A `ProtocolStore` held in memory: the reference implementation, for tests and for apps
/// that persist by other means (each state type has `serialized()`).
///
/// Every method runs on the actor, so each call, including `updatePreKeys` and
/// `commitEstablishment`, is atomic. Records are kept as values: storing one copies no key
/// material and serializes nothing.
public actor InMemoryProtocolStore: ProtocolStore {
    private struct SenderKeyName: Hashable {
        let group: GroupID
        let sender: ProtocolAddress
    }

    private let identity: IdentityKeyPair
    private var localPreKeys: LocalPreKeys?
    private var sessions: [ProtocolAddress: SessionRecord] = [:]
    private var sendingChains: [GroupID: SenderKeySendingChain] = [:]
    private var receiverStates: [SenderKeyName: SenderKeyReceiverState] = [:]

    /// A store for the device with `identity`, holding `preKeys` (none yet when `nil`).
    public init(identity: IdentityKeyPair, preKeys: LocalPreKeys? = nil) {
        self.identity = identity
        localPreKeys = preKeys
    }

    // MARK: IdentityKeyStore

    /// The identity given at creation.
    public func localIdentity() -> IdentityKeyPair { identity }

    // MARK: SessionStore

    /// The record for `address`, or `nil`.
    public func loadSession(for address: ProtocolAddress) -> SessionRecord? { sessions[address] }

    /// Stores `record` for `address`.
    public func storeSession(_ record: SessionRecord, for address: ProtocolAddress) { sessions[address] = record }

    /// Deletes the record for `address`.
    public func deleteSession(for address: ProtocolAddress) { sessions[address] = nil }

    /// The device ids of `userID` with a record, ascending.
    public func deviceIDs(ofUser userID: String) -> [UInt32] {
        let user = Array(userID.utf8)
        return sessions.keys.filter { $0.userIDBytes.elementsEqual(user) }.map(\.deviceID).sorted()
    }

    /// Every address with a record (for tests and inspection).
    public func addresses() -> [ProtocolAddress] { Array(sessions.keys) }

    // MARK: PreKeyStore

    /// The keys and the replay record a prekey message with `prefix` needs, as far as held.
    public func preKeys(for prefix: PreKeyMessage.Prefix) -> PreKeySet {
        localPreKeys?.preKeySet(for: prefix) ?? PreKeySet()
    }

    /// The prekeys, or `nil`.
    public func loadPreKeys() -> LocalPreKeys? { localPreKeys }

    /// Runs `update` on the prekeys and keeps the result only when it returns.
    /// - Throws: the error of `update`; nothing changed then.
    public func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) throws(SessionError) -> Result {
        var candidate = localPreKeys
        let result = try update(&candidate)
        localPreKeys = candidate
        return result
    }

    // MARK: ProtocolStore

    /// Applies `consumption` to the prekeys and stores the record, or does neither.
    /// - Throws: `SessionError.unknownPreKey` when a prekey it names is not held.
    public func commitEstablishment(
        _ record: SessionRecord, for address: ProtocolAddress, applying consumption: PreKeyConsumption
    ) throws(SessionError) {
        guard var keys = localPreKeys else { throw .unknownPreKey }
        try keys.apply(consumption)
        localPreKeys = keys
        sessions[address] = record
    }

    // MARK: SenderKeyStore

    /// Our sending chain for `group`, or `nil`.
    public func loadSendingChain(for group: GroupID) -> SenderKeySendingChain? { sendingChains[group] }

    /// Stores our sending chain for `group`.
    public func storeSendingChain(_ chain: SenderKeySendingChain, for group: GroupID) { sendingChains[group] = chain }

    /// The chains received from `sender` in `group`, or `nil`.
    public func loadReceiverState(for group: GroupID, sender: ProtocolAddress) -> SenderKeyReceiverState? {
        receiverStates[SenderKeyName(group: group, sender: sender)]
    }

    /// Stores the chains received from `sender` in `group`.
    public func storeReceiverState(_ state: SenderKeyReceiverState, for group: GroupID, sender: ProtocolAddress) {
        receiverStates[SenderKeyName(group: group, sender: sender)] = state
    }

    /// Forgets the chains received from `sender` in `group`.
    public func removeReceiverState(for group: GroupID, sender: ProtocolAddress) {
        receiverStates[SenderKeyName(group: group, sender: sender)] = nil
    }
}
