import SignalPrimitives

/// The prekeys a device has issued (SPEC §3), with their lifecycle: a current signed prekey
/// rotated on a schedule, the replaced ones kept for a grace period, one-time prekeys generated
/// in batches and replenished when few remain, and, with a KEM, KEM prekeys like Signal's: a
/// batch of one-time KEM prekeys replenished like one-time prekeys, and one last-resort KEM
/// prekey per signed prekey, rotated and kept for the grace period together with it.
///
/// Post-quantum. With a KEM, every signed prekey is signed with `kem` = 1 and carries its
/// last-resort KEM prekey; bundles then always carry a KEM prekey (a one-time one while any is
/// left, else the last-resort one). A device that gains a KEM rotates its signed prekey at the
/// next upkeep. Each signed prekey counts the X3DH runs it completed: the store keeps their EK_A
/// values (the replay records of SPEC §3, `BaseKeyRecord`) next to the prekeys, and deletes
/// them with the signed prekey. A signed prekey takes at most
/// `ProtocolLimits.maximumRecordedBaseKeys` records, and is rotated early once
/// `PreKeyPolicy.maximumRecordedBaseKeys` are held.
///
/// Ids. Signed, one-time and KEM prekeys have separate id counters (one-time and last-resort
/// KEM prekeys share one). Each starts at 1 and increases by one per key issued; after
/// `UInt32.max` it wraps to 1 (0 is never issued). An id still held is never issued again.
///
/// Time. Nothing here reads a clock: rotation and expiry are decided against the `now` the
/// caller passes (from a `WallClock`). A clock that goes backwards delays rotation and expiry;
/// it never traps.
///
/// One-time prekeys and one-time KEM prekeys are removed, and EK_A counted (and recorded by the
/// store), only in the write that stores the session a prekey message created: the store calls
/// `StoreCommit.applyPreKeyChanges(to:)` inside `ProtocolStore.commit(_:)`.
///
/// To an app and to a store, the prekeys are an opaque value: `SessionManager` generates and
/// maintains them (`maintainPreKeys()`), a store persists them with `serialized()` and
/// `init(serialized:)` (kind `.preKeys`). A value type; every mutating method changes nothing
/// when it throws.
public struct LocalPreKeys: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A signed prekey with its last-resort KEM prekey, its dates and the number of EK_A replay
    /// records held under it.
    @_spi(Testing) public struct SignedPreKeyEntry: Sendable, CustomStringConvertible {
        /// The key.
        public let key: SignedPreKey
        /// The last-resort KEM prekey published with it: present exactly when the key is signed
        /// with `kem` = 1.
        public let lastResortKEMPreKey: KEMPreKey?
        /// When it was generated.
        public let createdAt: Timestamp
        /// When it was replaced by a newer signed prekey (`nil` for the current one).
        public let retiredAt: Timestamp?
        /// The number of X3DH runs completed with this key: the EK_A replay records (SPEC §3)
        /// the store holds under it (`BaseKeyRecord`).
        public fileprivate(set) var recordedBaseKeyCount: Int

        /// An entry from its parts.
        /// - Throws: `SessionError.invalidConfiguration` when `lastResortKEMPreKey` is present
        ///   without the `kem` bit or missing with it, or is not a last-resort key, or
        ///   `recordedBaseKeyCount` is negative.
        public init(
            key: SignedPreKey, lastResortKEMPreKey: KEMPreKey?, createdAt: Timestamp, retiredAt: Timestamp?,
            recordedBaseKeyCount: Int = 0
        ) throws(SessionError) {
            guard key.signsKEMPreKeys == (lastResortKEMPreKey != nil), lastResortKEMPreKey?.kind ?? .lastResort == .lastResort else {
                throw .invalidConfiguration("a signed prekey has a last-resort KEM prekey exactly when it is signed with kem = 1")
            }
            guard recordedBaseKeyCount >= 0 else { throw .invalidConfiguration("a negative number of replay records") }
            self.init(validKey: key, lastResortKEMPreKey: lastResortKEMPreKey, createdAt: createdAt, retiredAt: retiredAt,
                      recordedBaseKeyCount: recordedBaseKeyCount)
        }

        init(validKey key: SignedPreKey, lastResortKEMPreKey: KEMPreKey?, createdAt: Timestamp, retiredAt: Timestamp?,
             recordedBaseKeyCount: Int) {
            self.key = key
            self.lastResortKEMPreKey = lastResortKEMPreKey
            self.createdAt = createdAt
            self.retiredAt = retiredAt
            self.recordedBaseKeyCount = recordedBaseKeyCount
        }

        /// The same entry, retired at `time`.
        func retired(at time: Timestamp) -> SignedPreKeyEntry {
            SignedPreKeyEntry(validKey: key, lastResortKEMPreKey: lastResortKEMPreKey, createdAt: createdAt, retiredAt: time,
                              recordedBaseKeyCount: recordedBaseKeyCount)
        }

        /// The id, the KEM bit and dates, never the secret.
        public var description: String {
            "SignedPreKeyEntry(id: \(key.id), kem: \(lastResortKEMPreKey.map { String($0.id) } ?? "none"), "
                + "createdAt: \(createdAt.secondsSince1970), "
                + "retiredAt: \(retiredAt.map { String($0.secondsSince1970) } ?? "current"), records: \(recordedBaseKeyCount))"
        }
    }

    /// The most one-time prekeys (and, separately, one-time KEM prekeys) held at once.
    @_spi(Testing) public static let maximumOneTimePreKeyCount = 100_000

    /// The signed prekey published now.
    @_spi(Testing) public private(set) var currentSignedPreKey: SignedPreKeyEntry
    /// Replaced signed prekeys still within their grace period, most recently replaced first.
    @_spi(Testing) public private(set) var previousSignedPreKeys: [SignedPreKeyEntry]
    /// The one-time prekeys held (issued and not consumed), oldest first.
    @_spi(Testing) public private(set) var oneTimePreKeys: [OneTimePreKey]
    /// The one-time KEM prekeys held (issued and not consumed), oldest first.
    @_spi(Testing) public private(set) var oneTimeKEMPreKeys: [KEMPreKey]
    /// The id the next signed prekey gets, unless it is still held.
    @_spi(Testing) public private(set) var nextSignedPreKeyID: UInt32
    /// The id the next one-time prekey gets, unless it is still held.
    @_spi(Testing) public private(set) var nextOneTimePreKeyID: UInt32
    /// The id the next KEM prekey (one-time or last resort) gets, unless it is still held.
    @_spi(Testing) public private(set) var nextKEMPreKeyID: UInt32

    /// Assembles a state from its parts (persistence).
    init(
        currentSignedPreKey: SignedPreKeyEntry, previousSignedPreKeys: [SignedPreKeyEntry], oneTimePreKeys: [OneTimePreKey],
        oneTimeKEMPreKeys: [KEMPreKey], nextSignedPreKeyID: UInt32, nextOneTimePreKeyID: UInt32, nextKEMPreKeyID: UInt32
    ) {
        self.currentSignedPreKey = currentSignedPreKey
        self.previousSignedPreKeys = previousSignedPreKeys
        self.oneTimePreKeys = oneTimePreKeys
        self.oneTimeKEMPreKeys = oneTimeKEMPreKeys
        self.nextSignedPreKeyID = nextSignedPreKeyID
        self.nextOneTimePreKeyID = nextOneTimePreKeyID
        self.nextKEMPreKeyID = nextKEMPreKeyID
    }

    /// A first set of prekeys for a new device: signed prekey 1, created at `now`, and one
    /// batch of one-time prekeys; with `kem`, the signed prekey is signed with `kem` = 1 and
    /// comes with a last-resort KEM prekey, plus one batch of one-time KEM prekeys. Upload
    /// `fullUpload(identityKey:)`.
    /// - Throws: `SessionError.primitive` when libsodium is unusable, the errors of `kem`.
    @_spi(Testing) public init(
        identity: IdentityKeyPair, now: Timestamp, policy: PreKeyPolicy = .default,
        kem: (any KeyEncapsulationMechanism)? = nil, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) {
        let entry = try Self.newSignedPreKeyEntry(id: 1, kemID: 1, identity: identity, now: now, kem: kem, random: random)
        self.init(
            currentSignedPreKey: entry, previousSignedPreKeys: [], oneTimePreKeys: [], oneTimeKEMPreKeys: [],
            nextSignedPreKeyID: 2, nextOneTimePreKeyID: 1, nextKEMPreKeyID: kem == nil ? 1 : 2)
        _ = try generateOneTimePreKeys(count: policy.oneTimePreKeyBatchSize, random: random)
        if let kem {
            _ = try generateOneTimeKEMPreKeys(count: policy.oneTimePreKeyBatchSize, identity: identity, kem: kem, random: random)
        }
    }

    /// Every signed prekey entry held, the current one first.
    @_spi(Testing) public var signedPreKeyEntries: [SignedPreKeyEntry] { [currentSignedPreKey] + previousSignedPreKeys }

    // MARK: Lookup

    /// The signed prekey with `id`: the current one or one still within its grace period.
    @_spi(Testing) public func signedPreKey(id: UInt32) -> SignedPreKey? { entry(signedPreKeyID: id)?.key }

    /// The one-time prekey with `id`, if it is held (issued and not consumed).
    @_spi(Testing) public func oneTimePreKey(id: UInt32) -> OneTimePreKey? {
        oneTimePreKeys.first { $0.id == id }
    }

    /// The KEM prekey with `id`: a one-time one not consumed, or the last-resort one of a
    /// signed prekey still held.
    @_spi(Testing) public func kemPreKey(id: UInt32) -> KEMPreKey? {
        if let key = oneTimeKEMPreKeys.first(where: { $0.id == id }) { return key }
        return signedPreKeyEntries.lazy.compactMap(\.lastResortKEMPreKey).first { $0.id == id }
    }

    /// The number of EK_A replay records held under the signed prekey `signedPreKeyID` (0 when
    /// it is not held).
    @_spi(Testing) public func recordedBaseKeyCount(signedPreKeyID: UInt32) -> Int {
        entry(signedPreKeyID: signedPreKeyID)?.recordedBaseKeyCount ?? 0
    }

    /// The ids of the signed prekeys held here that `updated` no longer holds: removed, or
    /// replaced by another key under the same id (every one when `updated` is `nil`). A store
    /// deletes their EK_A replay records (`BaseKeyRecord`) in the write that stores `updated`
    /// (`PreKeyStore.updatePreKeys(_:)`).
    public func signedPreKeyIDsRemoved(in updated: LocalPreKeys?) -> [UInt32] {
        let kept = Dictionary(
            (updated?.signedPreKeyEntries ?? []).map { ($0.key.id, $0.key.publicKey) }, uniquingKeysWith: { first, _ in first })
        return signedPreKeyEntries.filter { kept[$0.key.id] != $0.key.publicKey }.map(\.key.id)
    }

    /// Whether a prekey message without a KEM part to the signed prekey `id` is past this
    /// device's in-flight window for classic messages at `now`: the key is classic (`kem` = 0),
    /// a newer signed prekey signed with `kem` = 1 is held (the device switched to KEM prekeys
    /// after issuing this one), and at least `policy.classicPreKeyMessageWindow` seconds have
    /// passed since the first such newer key was created. `false` for a key not held, a
    /// `kem` = 1 key (SPEC §3's stripped-KEM rule covers those) or a device that never switched
    /// (or switched back to classic keys after it).
    @_spi(Testing) public func refusesClassicPreKeyMessages(signedPreKeyID id: UInt32, now: Timestamp, policy: PreKeyPolicy = .default) -> Bool {
        let entries = signedPreKeyEntries
        guard let index = entries.firstIndex(where: { $0.key.id == id }), !entries[index].key.signsKEMPreKeys else { return false }
        // The entries newer than this one, oldest first; the first with kem = 1 is the switch.
        guard let firstKEMSigned = entries[..<index].reversed().first(where: { $0.key.signsKEMPreKeys }) else { return false }
        return now.seconds(since: firstKEMSigned.createdAt) >= policy.classicPreKeyMessageWindow
    }

    private func entry(signedPreKeyID id: UInt32) -> SignedPreKeyEntry? {
        if currentSignedPreKey.key.id == id { return currentSignedPreKey }
        return previousSignedPreKeys.first { $0.key.id == id }
    }

    /// The number of one-time prekeys held.
    @_spi(Testing) public var oneTimePreKeyCount: Int { oneTimePreKeys.count }

    /// Whether fewer than `policy.oneTimePreKeyLowWaterMark` one-time prekeys are held.
    @_spi(Testing) public func needsOneTimePreKeys(policy: PreKeyPolicy = .default) -> Bool {
        oneTimePreKeys.count < policy.oneTimePreKeyLowWaterMark
    }

    /// Whether the current signed prekey is due for rotation at `now`: it is at least
    /// `policy.signedPreKeyRotationInterval` old, or holds `policy.maximumRecordedBaseKeys`
    /// replay records.
    @_spi(Testing) public func isSignedPreKeyRotationDue(now: Timestamp, policy: PreKeyPolicy = .default) -> Bool {
        now.seconds(since: currentSignedPreKey.createdAt) >= policy.signedPreKeyRotationInterval
            || currentSignedPreKey.recordedBaseKeyCount >= policy.maximumRecordedBaseKeys
    }

    /// The bundle a server would hand out now: the identity key, the current signed prekey,
    /// the one-time prekey `oneTimePreKeyID` (none when `nil`) and, for a signed prekey signed
    /// with `kem` = 1, the one-time KEM prekey `kemPreKeyID` (the last-resort one when `nil`).
    /// Returns `nil` when a named key is not held, or a KEM prekey is named for a signed
    /// prekey without one.
    @_spi(Testing) public func bundle(identityKey: Ed25519.PublicKey, oneTimePreKeyID: UInt32?, kemPreKeyID: UInt32? = nil) -> PreKeyBundle? {
        var oneTimePreKey: OneTimePreKey?
        if let id = oneTimePreKeyID {
            guard let key = self.oneTimePreKey(id: id) else { return nil }
            oneTimePreKey = key
        }
        var kemPreKey = currentSignedPreKey.lastResortKEMPreKey
        if let id = kemPreKeyID {
            guard kemPreKey != nil, let key = oneTimeKEMPreKeys.first(where: { $0.id == id }) else { return nil }
            kemPreKey = key
        }
        return PreKeyBundle(
            identityKey: identityKey, signedPreKey: currentSignedPreKey.key, oneTimePreKey: oneTimePreKey, kemPreKey: kemPreKey)
    }

    /// Everything to publish for a first registration (or a full re-upload): the current
    /// signed prekey with its last-resort KEM prekey, and every one-time prekey and one-time
    /// KEM prekey held.
    @_spi(Testing) public func fullUpload(identityKey: Ed25519.PublicKey) -> PreKeyUpload {
        PreKeyUpload(
            identityKey: identityKey, signedPreKey: PreKeyUpload.SignedKey(currentSignedPreKey.key),
            lastResortKEMPreKey: currentSignedPreKey.lastResortKEMPreKey.map(PreKeyBundle.KEMKey.init),
            oneTimePreKeys: oneTimePreKeys.map { PreKeyBundle.OneTimeKey(id: $0.id, publicKey: $0.publicKey) },
            oneTimeKEMPreKeys: oneTimeKEMPreKeys.map(PreKeyBundle.KEMKey.init))
    }

    // MARK: Consumption

    /// Applies what an X3DH used (SPEC §3), as the store does in the write that stores the
    /// session: deletes the one-time prekey and the one-time KEM prekey, and counts the EK_A
    /// record under the signed prekey (the store keeps the record itself:
    /// `StoreCommit.baseKeyRecord`). A signed prekey whose replay record is full
    /// (`maximumRecordedBaseKeys`, by default `ProtocolLimits.maximumRecordedBaseKeys`) is
    /// retired for new sessions: its record cannot grow, so no further X3DH completes with it
    /// (the next upkeep replaces a full current one), which bounds the records whatever prekey
    /// messages anyone mints from a published bundle.
    /// - Throws: `SessionError.unknownPreKey` when the signed prekey, the one-time prekey or
    ///   the one-time KEM prekey is not held (a concurrent decryption consumed it first), or
    ///   the signed prekey's replay record is full; nothing changes then.
    @_spi(Testing) public mutating func apply(
        _ consumption: PreKeyConsumption, maximumRecordedBaseKeys: Int = ProtocolLimits.maximumRecordedBaseKeys
    ) throws(SessionError) {
        var candidate = self
        if let id = consumption.oneTimePreKeyID {
            guard candidate.removeOneTimePreKey(id: id) != nil else { throw .unknownPreKey }
        }
        if let id = consumption.oneTimeKEMPreKeyID {
            guard let index = candidate.oneTimeKEMPreKeys.firstIndex(where: { $0.id == id }) else { throw .unknownPreKey }
            candidate.oneTimeKEMPreKeys.remove(at: index)
        }
        if candidate.currentSignedPreKey.key.id == consumption.signedPreKeyID {
            guard candidate.currentSignedPreKey.recordedBaseKeyCount < maximumRecordedBaseKeys else { throw .unknownPreKey }
            candidate.currentSignedPreKey.recordedBaseKeyCount += 1
        } else if let index = candidate.previousSignedPreKeys.firstIndex(where: { $0.key.id == consumption.signedPreKeyID }) {
            guard candidate.previousSignedPreKeys[index].recordedBaseKeyCount < maximumRecordedBaseKeys else { throw .unknownPreKey }
            candidate.previousSignedPreKeys[index].recordedBaseKeyCount += 1
        } else {
            throw .unknownPreKey
        }
        self = candidate
    }

    /// Counts `record` under its signed prekey, as `apply(_:maximumRecordedBaseKeys:)` does for
    /// a prekey message that used no one-time prekey (a store adding records in bulk).
    /// - Throws: `SessionError.unknownPreKey` when the signed prekey is not held or its record
    ///   is full; nothing changes then.
    @_spi(Storage) @_spi(Testing) public mutating func count(_ record: BaseKeyRecord) throws(SessionError) {
        try apply(PreKeyConsumption(signedPreKeyID: record.signedPreKeyID, baseKey: record.baseKey, oneTimePreKeyID: nil,
                                    oneTimeKEMPreKeyID: nil))
    }

    // MARK: One-time prekeys

    /// Generates `count` one-time prekeys with the next free ids and holds them.
    /// Returns the new keys (upload their public parts).
    /// - Throws: `SessionError.invalidConfiguration` for a negative count or when more than
    ///   `maximumOneTimePreKeyCount` keys would be held, `.primitive` when libsodium is
    ///   unusable. Nothing changes when it throws.
    @_spi(Testing) public mutating func generateOneTimePreKeys(
        count: Int, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> [OneTimePreKey] {
        try Self.checkGeneration(count: count, held: oneTimePreKeys.count)
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

    /// Generates `count` one-time KEM prekeys with the next free KEM ids, signed by `identity`.
    /// Returns the new keys (upload their public parts).
    /// - Throws: as `generateOneTimePreKeys(count:random:)`, and the errors of `kem`.
    @_spi(Testing) public mutating func generateOneTimeKEMPreKeys(
        count: Int, identity: IdentityKeyPair, kem: some KeyEncapsulationMechanism,
        random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> [KEMPreKey] {
        try Self.checkGeneration(count: count, held: oneTimeKEMPreKeys.count)
        var next = nextKEMPreKeyID
        var generated: [KEMPreKey] = []
        generated.reserveCapacity(count)
        var held = heldKEMPreKeyIDs
        for _ in 0 ..< count {
            let id = Self.allocate(from: &next) { held.contains($0) }
            held.insert(id)
            generated.append(try KEMPreKey(id: id, kind: .oneTime, signedBy: identity, kem: kem, using: random))
        }
        oneTimeKEMPreKeys.append(contentsOf: generated)
        nextKEMPreKeyID = next
        return generated
    }

    /// When fewer than the low-water mark are held, generates enough one-time prekeys to hold
    /// a full batch again and returns them; otherwise returns an empty array.
    /// - Throws: as `generateOneTimePreKeys(count:random:)`.
    @_spi(Testing) public mutating func replenishOneTimePreKeys(
        policy: PreKeyPolicy = .default, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> [OneTimePreKey] {
        guard needsOneTimePreKeys(policy: policy) else { return [] }
        return try generateOneTimePreKeys(count: policy.oneTimePreKeyBatchSize - oneTimePreKeys.count, random: random)
    }

    /// Removes the one-time prekey `id` and returns it, or `nil` when it is not held.
    @discardableResult
    @_spi(Testing) public mutating func removeOneTimePreKey(id: UInt32) -> OneTimePreKey? {
        guard let index = oneTimePreKeys.firstIndex(where: { $0.id == id }) else { return nil }
        return oneTimePreKeys.remove(at: index)
    }

    // MARK: Signed prekeys

    /// Replaces the current signed prekey with a new one (the next free id) created at `now`,
    /// signed with `kem` = 1 and given a new last-resort KEM prekey when `kem` is not `nil`;
    /// the replaced key is kept, retired at `now`, until its grace period has passed. Returns
    /// the new entry (upload its public parts).
    /// - Throws: `SessionError.primitive` when libsodium is unusable, the errors of `kem`;
    ///   nothing changes then.
    @discardableResult
    @_spi(Testing) public mutating func rotateSignedPreKey(
        identity: IdentityKeyPair, now: Timestamp, kem: (any KeyEncapsulationMechanism)? = nil,
        random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> SignedPreKeyEntry {
        let held = Set(signedPreKeyEntries.map(\.key.id))
        var next = nextSignedPreKeyID
        let id = Self.allocate(from: &next) { held.contains($0) }
        var nextKEM = nextKEMPreKeyID
        let heldKEM = heldKEMPreKeyIDs
        let kemID = Self.allocate(from: &nextKEM) { heldKEM.contains($0) }
        let entry = try Self.newSignedPreKeyEntry(id: id, kemID: kemID, identity: identity, now: now, kem: kem, random: random)
        previousSignedPreKeys.insert(currentSignedPreKey.retired(at: now), at: 0)
        currentSignedPreKey = entry
        nextSignedPreKeyID = next
        if kem != nil { nextKEMPreKeyID = nextKEM }
        return entry
    }

    /// Removes the replaced signed prekeys whose grace period has passed at `now` (retired at
    /// least `policy.signedPreKeyGracePeriod` seconds ago), with their last-resort KEM prekeys,
    /// and returns their ids (the store deletes their replay records in the same write:
    /// `signedPreKeyIDsRemoved(in:)`). A prekey message naming one of them then fails with
    /// `unknownPreKey`.
    @discardableResult
    @_spi(Testing) public mutating func removeExpiredSignedPreKeys(now: Timestamp, policy: PreKeyPolicy = .default) -> [UInt32] {
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
    /// the signed prekey when it is due (or, with a `kem`, when it is not signed with `kem` = 1),
    /// removes expired replaced ones, and replenishes the one-time prekeys (and, with a `kem`,
    /// the one-time KEM prekeys) when fewer than the low-water mark are held. Returns what to
    /// upload (empty when nothing changed on the public side).
    /// - Throws: `SessionError.primitive` when libsodium is unusable, the errors of `kem`;
    ///   nothing changes then.
    @_spi(Testing) public mutating func maintain(
        identity: IdentityKeyPair, now: Timestamp, policy: PreKeyPolicy = .default,
        kem: (any KeyEncapsulationMechanism)? = nil, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> PreKeyUpload {
        var candidate = self
        var rotated: SignedPreKeyEntry?
        let gainedKEM = kem != nil && !candidate.currentSignedPreKey.key.signsKEMPreKeys
        if gainedKEM || candidate.isSignedPreKeyRotationDue(now: now, policy: policy) {
            rotated = try candidate.rotateSignedPreKey(identity: identity, now: now, kem: kem, random: random)
        }
        candidate.removeExpiredSignedPreKeys(now: now, policy: policy)
        let oneTime = try candidate.replenishOneTimePreKeys(policy: policy, random: random)
        var oneTimeKEM: [KEMPreKey] = []
        if let kem, candidate.oneTimeKEMPreKeys.count < policy.oneTimePreKeyLowWaterMark {
            oneTimeKEM = try candidate.generateOneTimeKEMPreKeys(
                count: policy.oneTimePreKeyBatchSize - candidate.oneTimeKEMPreKeys.count, identity: identity, kem: kem,
                random: random)
        }
        self = candidate
        return PreKeyUpload(
            identityKey: identity.publicKey, signedPreKey: rotated.map { PreKeyUpload.SignedKey($0.key) },
            lastResortKEMPreKey: rotated?.lastResortKEMPreKey.map(PreKeyBundle.KEMKey.init),
            oneTimePreKeys: oneTime.map { PreKeyBundle.OneTimeKey(id: $0.id, publicKey: $0.publicKey) },
            oneTimeKEMPreKeys: oneTimeKEM.map(PreKeyBundle.KEMKey.init))
    }

    /// Replenishes from the counts the *server* reports: the one-time prekeys (and one-time KEM
    /// prekeys) it still holds for this device. A server hands a key out once, whether or not
    /// the peer that took it ever sends a message, so the server's stock can run dry while this
    /// device still holds every key (the count `maintain` looks at): a server that hands out
    /// bundles nobody uses would otherwise keep new sessions without one-time prekeys.
    ///
    /// When the server holds fewer than `policy.oneTimePreKeyLowWaterMark`, generates enough to
    /// bring it back to a full batch (`policy.oneTimePreKeyBatchSize` minus its count), and the
    /// same for one-time KEM prekeys when `kem` is given with `serverOneTimeKEMPreKeyCount`. So
    /// that keys handed out and never used cannot pile up here, at most
    /// `heldOneTimePreKeyLimit(policy:)` of a kind are held: the oldest beyond it are dropped
    /// first (a peer that took one of them long ago and sends only now gets `unknownPreKey`,
    /// and recovers through a retry notice, SPEC §9). Returns the new keys to upload (no
    /// signed prekey: run `maintain` for rotation).
    /// - Throws: `SessionError.invalidConfiguration` for a negative count, `.primitive` when
    ///   libsodium is unusable, the errors of `kem`; nothing changes then.
    @_spi(Testing) public mutating func replenish(
        serverOneTimePreKeyCount: Int, serverOneTimeKEMPreKeyCount: Int? = nil, identity: IdentityKeyPair,
        policy: PreKeyPolicy = .default, kem: (any KeyEncapsulationMechanism)? = nil, random: any RandomSource = SystemRandomSource()
    ) throws(SessionError) -> PreKeyUpload {
        guard serverOneTimePreKeyCount >= 0, serverOneTimeKEMPreKeyCount ?? 0 >= 0 else {
            throw .invalidConfiguration("a server's prekey count must not be negative")
        }
        var candidate = self
        let limit = Self.heldOneTimePreKeyLimit(policy: policy)
        var oneTime: [OneTimePreKey] = []
        if serverOneTimePreKeyCount < policy.oneTimePreKeyLowWaterMark {
            let count = policy.oneTimePreKeyBatchSize - serverOneTimePreKeyCount
            let excess = candidate.oneTimePreKeys.count + count - limit
            if excess > 0 { candidate.oneTimePreKeys.removeFirst(min(excess, candidate.oneTimePreKeys.count)) }
            oneTime = try candidate.generateOneTimePreKeys(count: count, random: random)
        }
        var oneTimeKEM: [KEMPreKey] = []
        if let kem, let reported = serverOneTimeKEMPreKeyCount, reported < policy.oneTimePreKeyLowWaterMark {
            let count = policy.oneTimePreKeyBatchSize - reported
            let excess = candidate.oneTimeKEMPreKeys.count + count - limit
            if excess > 0 { candidate.oneTimeKEMPreKeys.removeFirst(min(excess, candidate.oneTimeKEMPreKeys.count)) }
            oneTimeKEM = try candidate.generateOneTimeKEMPreKeys(count: count, identity: identity, kem: kem, random: random)
        }
        self = candidate
        return PreKeyUpload(
            identityKey: identity.publicKey, signedPreKey: nil,
            oneTimePreKeys: oneTime.map { PreKeyBundle.OneTimeKey(id: $0.id, publicKey: $0.publicKey) },
            oneTimeKEMPreKeys: oneTimeKEM.map(PreKeyBundle.KEMKey.init))
    }

    /// The most one-time prekeys (and, separately, one-time KEM prekeys) held after a
    /// replenishment from the server's count (`replenish(serverOneTimePreKeyCount:…)`): ten
    /// batches (500 with the default policy), at most `maximumOneTimePreKeyCount`.
    @_spi(Testing) public static func heldOneTimePreKeyLimit(policy: PreKeyPolicy) -> Int {
        min(maximumOneTimePreKeyCount, policy.oneTimePreKeyBatchSize * 10)
    }

    /// Prepares the prekeys of a store found restored from an older copy of itself
    /// (`SessionKitSQLite`'s restore detection) for a rotation at the next upkeep: every
    /// one-time prekey and one-time KEM prekey is dropped (the lost copy may have handed them out
    /// and consumed them, and the server drops them anyway when the new registration id
    /// arrives), the current signed prekey becomes due for rotation (`maintain` replaces it and
    /// keeps it for its grace period, for prekey messages in flight), and every id counter jumps
    /// ahead by `restoreIDJump`, so that no id the lost copy issued since the backup is issued
    /// again for other keys. Nothing secret is created here: `SessionManager.maintainPreKeys()`
    /// then generates the new keys and returns them to upload.
    @_spi(Storage) @_spi(Testing) public mutating func discardForRestoredStore() {
        oneTimePreKeys = []
        oneTimeKEMPreKeys = []
        currentSignedPreKey = SignedPreKeyEntry(
            validKey: currentSignedPreKey.key, lastResortKEMPreKey: currentSignedPreKey.lastResortKEMPreKey,
            createdAt: Timestamp(secondsSince1970: .min), retiredAt: nil,
            recordedBaseKeyCount: currentSignedPreKey.recordedBaseKeyCount)
        nextSignedPreKeyID = Self.jumped(nextSignedPreKeyID)
        nextOneTimePreKeyID = Self.jumped(nextOneTimePreKeyID)
        nextKEMPreKeyID = Self.jumped(nextKEMPreKeyID)
    }

    /// How far each id counter jumps after a restore (`discardForRestoredStore()`): 2^24, more
    /// ids than a device issues between a backup and its restore, and far below the 2^31 − 1
    /// within which `PublishedPreKeys` takes a signed prekey id as newer.
    @_spi(Testing) public static let restoreIDJump: UInt32 = 1 << 24

    /// `next` moved `restoreIDJump` ahead, wrapping past `UInt32.max` to 1 (0 is never issued).
    private static func jumped(_ next: UInt32) -> UInt32 {
        let (sum, overflow) = next.addingReportingOverflow(restoreIDJump)
        guard overflow else { return sum == 0 ? 1 : sum }
        return sum &+ 1
    }

    // MARK: Ids

    /// The ids of every KEM prekey held (one-time and last resort).
    private var heldKEMPreKeyIDs: Set<UInt32> {
        Set(oneTimeKEMPreKeys.map(\.id) + signedPreKeyEntries.compactMap(\.lastResortKEMPreKey?.id))
    }

    /// A new signed prekey entry with `id`; with `kem`, signed with `kem` = 1 and given a
    /// last-resort KEM prekey with id `kemID`.
    private static func newSignedPreKeyEntry(
        id: UInt32, kemID: UInt32, identity: IdentityKeyPair, now: Timestamp,
        kem: (any KeyEncapsulationMechanism)?, random: any RandomSource
    ) throws(SessionError) -> SignedPreKeyEntry {
        let key = try SignedPreKey(id: id, signedBy: identity, signsKEMPreKeys: kem != nil, using: random)
        var lastResort: KEMPreKey?
        if let kem {
            lastResort = try KEMPreKey(id: kemID, kind: .lastResort, signedBy: identity, kem: kem, using: random)
        }
        return SignedPreKeyEntry(validKey: key, lastResortKEMPreKey: lastResort, createdAt: now, retiredAt: nil, recordedBaseKeyCount: 0)
    }

    private static func checkGeneration(count: Int, held: Int) throws(SessionError) {
        guard count >= 0 else { throw .invalidConfiguration("the one-time prekey count must not be negative") }
        guard count <= maximumOneTimePreKeyCount - held else {
            throw .invalidConfiguration("at most \(maximumOneTimePreKeyCount) one-time prekeys of a kind are held")
        }
    }

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
        "LocalPreKeys(signed: \(currentSignedPreKey.key.id), kem: \(currentSignedPreKey.key.signsKEMPreKeys), "
            + "previous: \(previousSignedPreKeys.map(\.key.id)), oneTime: \(oneTimePreKeys.count) keys, "
            + "oneTimeKEM: \(oneTimeKEMPreKeys.count) keys, "
            + "next ids: \(nextSignedPreKeyID)/\(nextOneTimePreKeyID)/\(nextKEMPreKeyID), secrets redacted)"
    }
    /// A redacted description.
    public var debugDescription: String { description }
}
