import SignalPrimitives

/// The prekeys a device has issued (SPEC §3), with their lifecycle: a current signed prekey
/// rotated on a schedule, the replaced ones kept for a grace period, and one-time prekeys
/// generated in batches and replenished when few remain.
///
/// Ids. Signed and one-time prekeys have separate id counters. Each starts at 1 and increases
/// by one per key issued; after `UInt32.max` it wraps to 1 (0 is never issued). An id still
/// held is never issued again: allocation skips past it. So an id is reused only after about
/// 2^32 issues and only once its earlier key is gone (consumed, or expired for a signed prekey),
/// at which point a prekey message naming the old key fails anyway.
///
/// Time. Nothing here reads a clock: rotation and expiry are decided against the `now` the
/// caller passes (from a `WallClock`). A clock that goes backwards delays rotation and expiry;
/// it never traps.
///
/// One-time prekeys are removed only by `removeOneTimePreKey(id:)`, which the caller runs in
/// the same transaction that stores the session a prekey message created (see
/// `ProtocolStore.commitEstablishment`). A one-time prekey the server handed out but whose
/// prekey message never arrives stays held and counted.
///
/// A value type; every mutating method changes nothing when it throws. Conforms to
/// `PreKeyLookup`, so it can be passed to `SessionState.accept` and `SessionRecord.decrypt`.
/// Persist it with `serialized()` (kind `.preKeys`).
public struct LocalPreKeys: PreKeyLookup, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A signed prekey with its dates.
    public struct SignedPreKeyEntry: Sendable, CustomStringConvertible {
        /// The key.
        public let key: SignedPreKey
        /// When it was generated.
        public let createdAt: Timestamp
        /// When it was replaced by a newer signed prekey (`nil` for the current one).
        public let retiredAt: Timestamp?

        /// An entry from its parts.
        public init(key: SignedPreKey, createdAt: Timestamp, retiredAt: Timestamp?) {
            self.key = key
            self.createdAt = createdAt
            self.retiredAt = retiredAt
        }

        /// The id and dates, never the secret.
        public var description: String {
            "SignedPreKeyEntry(id: \(key.id), createdAt: \(createdAt.secondsSince1970), retiredAt: \(retiredAt.map { String($0.secondsSince1970) } ?? "current"))"
        }
    }

    /// The most one-time prekeys held at once; generating beyond it is refused.
    public static let maximumOneTimePreKeyCount = 100_000

    /// The signed prekey published now.
    public private(set) var currentSignedPreKey: SignedPreKeyEntry
    /// Replaced signed prekeys still within their grace period, most recently replaced first.
    public private(set) var previousSignedPreKeys: [SignedPreKeyEntry]
    /// The one-time prekeys held (issued and not consumed), oldest first.
    public private(set) var oneTimePreKeys: [OneTimePreKey]
    /// The id the next signed prekey gets, unless it is still held.
    public private(set) var nextSignedPreKeyID: UInt32
    /// The id the next one-time prekey gets, unless it is still held.
    public private(set) var nextOneTimePreKeyID: UInt32

    /// Assembles a state from its parts (persistence).
    init(
        currentSignedPreKey: SignedPreKeyEntry, previousSignedPreKeys: [SignedPreKeyEntry], oneTimePreKeys: [OneTimePreKey],
        nextSignedPreKeyID: UInt32, nextOneTimePreKeyID: UInt32
    ) {
        self.currentSignedPreKey = currentSignedPreKey
        self.previousSignedPreKeys = previousSignedPreKeys
        self.oneTimePreKeys = oneTimePreKeys
        self.nextSignedPreKeyID = nextSignedPreKeyID
        self.nextOneTimePreKeyID = nextOneTimePreKeyID
    }

    /// A first set of prekeys for a new device: signed prekey 1, created at `now`, and one
    /// batch of one-time prekeys (ids 1…batch size). Upload `fullUpload(identityKey:)`.
    /// - Throws: `SessionError.primitive` when libsodium is unusable.
    public init(
        identity: IdentityKeyPair, now: Timestamp, policy: PreKeyPolicy = .default,
        random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) {
        let signed = try SignedPreKey(id: 1, signedBy: identity, using: random)
        self.init(
            currentSignedPreKey: SignedPreKeyEntry(key: signed, createdAt: now, retiredAt: nil), previousSignedPreKeys: [],
            oneTimePreKeys: [], nextSignedPreKeyID: 2, nextOneTimePreKeyID: 1)
        _ = try generateOneTimePreKeys(count: policy.oneTimePreKeyBatchSize, random: random)
    }

    // MARK: Lookup

    /// The signed prekey with `id`: the current one or one still within its grace period.
    public func signedPreKey(id: UInt32) -> SignedPreKey? {
        if currentSignedPreKey.key.id == id { return currentSignedPreKey.key }
        return previousSignedPreKeys.first { $0.key.id == id }?.key
    }

    /// The one-time prekey with `id`, if it is held (issued and not consumed).
    public func oneTimePreKey(id: UInt32) -> OneTimePreKey? {
        oneTimePreKeys.first { $0.id == id }
    }

    /// The number of one-time prekeys held.
    public var oneTimePreKeyCount: Int { oneTimePreKeys.count }

    /// Whether fewer than `policy.oneTimePreKeyLowWaterMark` one-time prekeys are held.
    public func needsOneTimePreKeys(policy: PreKeyPolicy = .default) -> Bool {
        oneTimePreKeys.count < policy.oneTimePreKeyLowWaterMark
    }

    /// Whether the current signed prekey is at least `policy.signedPreKeyRotationInterval` old at `now`.
    public func isSignedPreKeyRotationDue(now: Timestamp, policy: PreKeyPolicy = .default) -> Bool {
        now.seconds(since: currentSignedPreKey.createdAt) >= policy.signedPreKeyRotationInterval
    }

    /// The bundle a server would hand out now: the identity key, the current signed prekey and
    /// the one-time prekey `oneTimePreKeyID` (none when `nil`). Returns `nil` when that
    /// one-time prekey is not held.
    public func bundle(identityKey: Ed25519.PublicKey, oneTimePreKeyID: UInt32?) -> PreKeyBundle? {
        var oneTimePreKey: OneTimePreKey?
        if let id = oneTimePreKeyID {
            guard let key = self.oneTimePreKey(id: id) else { return nil }
            oneTimePreKey = key
        }
        return PreKeyBundle(identityKey: identityKey, signedPreKey: currentSignedPreKey.key, oneTimePreKey: oneTimePreKey)
    }

    /// Everything to publish for a first registration (or a full re-upload): the current
    /// signed prekey and every one-time prekey held.
    public func fullUpload(identityKey: Ed25519.PublicKey) -> PreKeyUpload {
        PreKeyUpload(
            identityKey: identityKey, signedPreKey: PreKeyUpload.SignedKey(currentSignedPreKey.key),
            oneTimePreKeys: oneTimePreKeys.map { PreKeyBundle.OneTimeKey(id: $0.id, publicKey: $0.publicKey) })
    }

    // MARK: One-time prekeys

    /// Generates `count` one-time prekeys with the next free ids and holds them.
    /// Returns the new keys (upload their public parts).
    /// - Throws: `SessionError.invalidConfiguration` for a negative count or when more than
    ///   `maximumOneTimePreKeyCount` keys would be held, `.primitive` when libsodium is
    ///   unusable. Nothing changes when it throws.
    public mutating func generateOneTimePreKeys(
        count: Int, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> [OneTimePreKey] {
        guard count >= 0 else { throw .invalidConfiguration("the one-time prekey count must not be negative") }
        guard count <= Self.maximumOneTimePreKeyCount - oneTimePreKeys.count else {
            throw .invalidConfiguration("at most \(Self.maximumOneTimePreKeyCount) one-time prekeys are held")
        }
        var held = Set(oneTimePreKeys.map(\.id))
        var next = nextOneTimePreKeyID
        var generated: [OneTimePreKey] = []
        generated.reserveCapacity(count)
        for _ in 0 ..< count {
            let id = Self.allocate(from: &next) { held.contains($0) }
            held.insert(id)
            generated.append(try OneTimePreKey(id: id, using: random))
        }
        oneTimePreKeys.append(contentsOf: generated)
        nextOneTimePreKeyID = next
        return generated
    }

    /// When fewer than the low-water mark are held, generates enough one-time prekeys to hold
    /// a full batch again and returns them; otherwise returns an empty array.
    /// - Throws: as `generateOneTimePreKeys(count:random:)`.
    public mutating func replenishOneTimePreKeys(
        policy: PreKeyPolicy = .default, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> [OneTimePreKey] {
        guard needsOneTimePreKeys(policy: policy) else { return [] }
        return try generateOneTimePreKeys(count: policy.oneTimePreKeyBatchSize - oneTimePreKeys.count, random: random)
    }

    /// Removes the one-time prekey `id` (a prekey message used it) and returns it, or `nil`
    /// when it is not held.
    @discardableResult
    public mutating func removeOneTimePreKey(id: UInt32) -> OneTimePreKey? {
        guard let index = oneTimePreKeys.firstIndex(where: { $0.id == id }) else { return nil }
        return oneTimePreKeys.remove(at: index)
    }

    // MARK: Signed prekeys

    /// Replaces the current signed prekey with a new one (the next free id) created at `now`;
    /// the replaced key is kept, retired at `now`, until its grace period has passed.
    /// Returns the new key (upload its public parts).
    /// - Throws: `SessionError.primitive` when libsodium is unusable; nothing changes then.
    @discardableResult
    public mutating func rotateSignedPreKey(
        identity: IdentityKeyPair, now: Timestamp, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> SignedPreKey {
        let held = Set([currentSignedPreKey.key.id] + previousSignedPreKeys.map(\.key.id))
        var next = nextSignedPreKeyID
        let id = Self.allocate(from: &next) { held.contains($0) }
        let key = try SignedPreKey(id: id, signedBy: identity, using: random)
        let retired = SignedPreKeyEntry(key: currentSignedPreKey.key, createdAt: currentSignedPreKey.createdAt, retiredAt: now)
        previousSignedPreKeys.insert(retired, at: 0)
        currentSignedPreKey = SignedPreKeyEntry(key: key, createdAt: now, retiredAt: nil)
        nextSignedPreKeyID = next
        return key
    }

    /// Removes the replaced signed prekeys whose grace period has passed at `now` (retired at
    /// least `policy.signedPreKeyGracePeriod` seconds ago) and returns their ids. A prekey
    /// message naming one of them then fails with `unknownPreKey`.
    @discardableResult
    public mutating func removeExpiredSignedPreKeys(now: Timestamp, policy: PreKeyPolicy = .default) -> [UInt32] {
        var removed: [UInt32] = []
        previousSignedPreKeys.removeAll { entry in
            guard let retiredAt = entry.retiredAt, now.seconds(since: retiredAt) >= policy.signedPreKeyGracePeriod else {
                return false
            }
            removed.append(entry.key.id)
            return true
        }
        return removed
    }

    /// The periodic upkeep, to run at start-up and then regularly (for example daily): rotates
    /// the signed prekey when it is due, removes expired replaced ones, and replenishes the
    /// one-time prekeys when fewer than the low-water mark are held. Returns what to upload
    /// (empty when nothing changed on the public side).
    /// - Throws: `SessionError.primitive` when libsodium is unusable; nothing changes then.
    public mutating func maintain(
        identity: IdentityKeyPair, now: Timestamp, policy: PreKeyPolicy = .default,
        random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> PreKeyUpload {
        var candidate = self
        var signed: PreKeyUpload.SignedKey?
        if candidate.isSignedPreKeyRotationDue(now: now, policy: policy) {
            signed = PreKeyUpload.SignedKey(try candidate.rotateSignedPreKey(identity: identity, now: now, random: random))
        }
        candidate.removeExpiredSignedPreKeys(now: now, policy: policy)
        let oneTime = try candidate.replenishOneTimePreKeys(policy: policy, random: random)
        self = candidate
        return PreKeyUpload(
            identityKey: identity.publicKey, signedPreKey: signed,
            oneTimePreKeys: oneTime.map { PreKeyBundle.OneTimeKey(id: $0.id, publicKey: $0.publicKey) })
    }

    // MARK: Ids

    /// The id after `id`: ids run 1…UInt32.max and wrap to 1.
    static func successor(of id: UInt32) -> UInt32 { id == .max ? 1 : id + 1 }

    /// The first id from `next` on (wrapping) that is not held; advances `next` past it.
    /// Terminates because fewer than 2^32 − 1 keys are ever held.
    static func allocate(from next: inout UInt32, isHeld: (UInt32) -> Bool) -> UInt32 {
        var candidate = next == 0 ? 1 : next
        while isHeld(candidate) { candidate = successor(of: candidate) }
        next = successor(of: candidate)
        return candidate
    }

    /// The ids and counts, never a secret.
    public var description: String {
        "LocalPreKeys(signed: \(currentSignedPreKey.key.id), previous: \(previousSignedPreKeys.map(\.key.id)), "
            + "oneTime: \(oneTimePreKeys.count) keys, next ids: \(nextSignedPreKeyID)/\(nextOneTimePreKeyID), secrets redacted)"
    }
    /// A redacted description.
    public var debugDescription: String { description }
}
