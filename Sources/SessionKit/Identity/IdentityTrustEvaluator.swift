import SignalPrimitives

/// The hook through which SessionKit asks whether a peer's identity key may be used, and
/// through which it records the keys it has seen.
///
/// Trust belongs to the user, not to the device: a user's devices share one identity key
/// (`IdentityKeyPair`, `DeviceLink`), so an evaluator keeps one record per user id (compared
/// as UTF-8 bytes) with the key, its status and the devices seen with it. A device whose key
/// is the user's inherits the user's status (a verified contact's new device is verified); a
/// different key on a device the record lists is a change of the user's key, and nothing is
/// sent to any device of that user until the app accepts or rejects it. A different key on a
/// device the record does not list, while the user's listed devices keep the recorded key, is
/// not a change (`IdentityObservation.unknownDeviceWithOtherKey`): the record is left alone,
/// the message is quarantined and the user's devices keep receiving.
///
/// The `Verification` module's trust stores conform (trust on first use); an app may supply
/// its own policy. Checking never writes: SessionKit asks `evaluateIdentity` before encrypting
/// to a device, when a bundle starts a session and when a message decrypts, and calls
/// `recordIdentity` only once the operation that saw the key has succeeded (a bundle refused
/// for any reason, a message that fails to decrypt or a failed processing step records
/// nothing). The local user's own devices never reach the evaluator with a key other than
/// the local identity key: `SessionManager` refuses those first
/// (`SessionError.ownDeviceIdentityMismatch`).
public protocol IdentityTrustEvaluator: Sendable {
    /// What recording `identityKey` for `address` would observe, and whether encrypting to it is
    /// allowed now (not for a changed key, nor after a change the app has not accepted).
    /// Records nothing.
    func evaluateIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws -> TrustDecision

    /// Records `identityKey` for `address`'s user and device: on first use it becomes the
    /// user's trusted key; the user's key on a device not seen before adds the device; a
    /// different key on a listed device replaces the user's key and awaits the app's
    /// acceptance; a different key on a device not listed changes nothing. Returns what was
    /// observed.
    func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws -> IdentityObservation

    /// Makes `identityKey` the trusted key of the user `userID` because the app accepted it
    /// (the user confirmed a key change, or a quarantined message's key). While a change awaits
    /// acceptance either key may be accepted: the new one ends the change and supersedes the
    /// key it replaced (messages under it are refused from now on); the one it would replace
    /// is restored (the pending key is dropped). A quarantined message's key replaces the
    /// user's without superseding it (the user's listed devices may still present it). Throw
    /// `SessionError.untrustedIdentity` for a third key while a change awaits acceptance (the
    /// key changed again since the app asked the user); `SessionManager` passes a
    /// `SessionError` on and reports any other error as `SessionError.storage`.
    func acceptIdentity(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws

    /// Rejects the change of the user `userID`'s key that awaits acceptance: the key it would
    /// replace is the user's again (and sending to it allowed), the pending key is dropped.
    /// Returns the user's key on record afterwards (unchanged when no change awaited
    /// acceptance), or `nil` when there is no record. The default throws
    /// `SessionError.invalidConfiguration` (an evaluator that does not keep pending changes
    /// cannot reject one); the `Verification` module's trust stores implement it.
    func rejectIdentity(forUser userID: String) async throws -> Ed25519.PublicKey?

    /// The identity key on record for the user `userID`, or `nil` when none is (or the
    /// evaluator keeps no keys). `SessionManager` uses it to address a retry notice (SPEC §9) to
    /// a device whose session this device lost: the notice's MAC is keyed with it, and a wrong
    /// key only makes the peer refuse the notice. Reads only. `nil` by default.
    func trustedIdentityKey(forUser userID: String) async throws -> Ed25519.PublicKey?

    /// `evaluateIdentity(_:for:)` for each (key, address) pair, in order: one call for a batch
    /// (`SessionManager.encrypt(_:toDevices:)`). The default calls `evaluateIdentity` for each;
    /// an evaluator that is an actor answers in one call to it. Records nothing.
    func evaluateIdentities(_ queries: [(identityKey: Ed25519.PublicKey, address: ProtocolAddress)]) async throws -> [TrustDecision]
}

extension IdentityTrustEvaluator {
    /// `evaluateIdentity(_:for:)` for each pair, in order.
    public func evaluateIdentities(_ queries: [(identityKey: Ed25519.PublicKey, address: ProtocolAddress)]) async throws -> [TrustDecision] {
        var decisions: [TrustDecision] = []
        decisions.reserveCapacity(queries.count)
        for query in queries { decisions.append(try await evaluateIdentity(query.identityKey, for: query.address)) }
        return decisions
    }

    /// No key known: an evaluator that keeps none.
    public func trustedIdentityKey(forUser userID: String) async throws -> Ed25519.PublicKey? { nil }

    /// Refuses: this evaluator does not say how to reject a key change.
    /// - Throws: `SessionError.invalidConfiguration`.
    public func rejectIdentity(forUser userID: String) async throws -> Ed25519.PublicKey? {
        throw SessionError.invalidConfiguration("the trust evaluator does not implement rejectIdentity(forUser:)")
    }
}

/// What a trust evaluator concluded about an identity key (`IdentityTrustEvaluator`).
public struct TrustDecision: Sendable, Hashable {
    /// What the evaluator saw: the first key for the user, the recorded one (on a known or a
    /// new device), a change, or another key on a device the record does not list.
    public let observation: IdentityObservation
    /// Whether encrypting to the key is allowed now.
    public let allowsSending: Bool
    /// Whether the user's key on record is verified. `SessionManager` quarantines a message
    /// under any other key (`DecryptedMessage.isQuarantined`): it is shown as such and records
    /// nothing, and the session it started does not become current.
    public let isVerified: Bool
    /// Whether the key was the user's before the app accepted another one: a message under it
    /// is refused (`SessionError.supersededIdentity`), and nothing is encrypted to it.
    public let isSuperseded: Bool
    /// Whether the key is the one a change that awaits acceptance would replace (the key the
    /// app last accepted): `SessionManager` quarantines a message under it and records nothing,
    /// so that the app still chooses between the two keys (accept either, or reject the
    /// change).
    public let isKeyBeforePendingChange: Bool

    /// Creates a decision.
    public init(
        observation: IdentityObservation, allowsSending: Bool, isVerified: Bool = false, isSuperseded: Bool = false,
        isKeyBeforePendingChange: Bool = false
    ) {
        self.observation = observation
        self.allowsSending = allowsSending
        self.isVerified = isVerified
        self.isSuperseded = isSuperseded
        self.isKeyBeforePendingChange = isKeyBeforePendingChange
    }
}

/// What a trust store concluded when it saw an identity key for a device of a user.
public enum IdentityObservation: Equatable, Hashable, Sendable {
    /// No key was known for the user: this one is now recorded and trusted on first use.
    case firstUse
    /// The key is the user's on record, seen before on this device (sending is allowed unless
    /// an earlier change still awaits acceptance).
    case unchanged
    /// The key is the user's on record, on a device not seen before: the user added a device
    /// (tell the user, as messengers do; a verified contact's new device is verified too,
    /// because it holds the verified key). For the local user's own devices this reports a
    /// device linked to the account.
    case newDevice
    /// The key differs from the user's on record, which was `previous`, on a device the record
    /// lists (or while it lists none). The user is now `unverified` and sending to any of its
    /// devices is refused until the app accepts either key or rejects the change (for a
    /// verified user the key is not recorded at all: the message is quarantined). Also
    /// reported, with nothing recorded and the message quarantined, for the key a pending
    /// change would replace (`TrustDecision.isKeyBeforePendingChange`).
    case changed(previous: Ed25519.PublicKey)
    /// The key differs from the user's on record (`recorded`), on a device id the record does
    /// not list, while the record lists devices: not a change of the user's key. Nothing is
    /// recorded, the message is quarantined (`DecryptedMessage.isQuarantined`), its session
    /// never becomes current, nothing is sent to that device, and sending to the user's
    /// devices goes on. It is what an injected message looks like, and also what a contact who
    /// reinstalled under a new device id looks like: show it apart, and accept its key
    /// (`SessionManager.acceptIdentityChange(_:forUser:)`) only once the user confirmed it with
    /// the contact (compared the safety number for the message's `senderIdentityKey`).
    case unknownDeviceWithOtherKey(recorded: Ed25519.PublicKey)
}
