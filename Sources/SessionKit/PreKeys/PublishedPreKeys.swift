import SignalPrimitives

/// What a server keeps for one device: the prekeys it uploaded, from which the server hands out
/// bundles. For backends (a relay, a chat SDK's server function) that must hand out each
/// one-time prekey and each one-time KEM prekey at most once, and the last-resort KEM prekey
/// once no one-time KEM prekey is left.
///
/// It holds public material only. Keep one value per device (`ProtocolAddress`), persist it as
/// your server does (`serialized` and `init(serialized:)`, which keep the ids handed out too),
/// and take bundles under the server's own lock so that two requests never get the same
/// one-time key:
///
///     var published = try PublishedPreKeys(registering: upload)   // the device's first upload
///     try published.merge(laterUpload)                             // what maintainPreKeys() sends next
///     let bundle = published.takeBundle()                          // one per new session
///
/// Every key is checked as it arrives (the identity key is a valid Ed25519 point, signatures
/// verify with it, X25519 keys are canonical, ML-KEM keys well-formed), so a bundle it hands
/// out passes the initiator's checks.
///
/// Uploads are idempotent: an upload sent again (a retry, also after bundles were taken) adds
/// nothing, because the ids of the last `maximumRememberedHandedOutKeys` one-time keys of each
/// kind handed out are remembered, and a key with such an id is never held again. A signed
/// prekey older than the held one (its id behind the held id, as `LocalPreKeys` issues ids:
/// increasing by one per key, wrapping after `UInt32.max`) is refused, so a replayed or
/// reordered upload cannot bring back a replaced signed prekey. The id is not signed: this
/// stops retries and replays, not a party that can upload as the device.
///
/// Cost. Merging is linear in the upload's size (dictionaries, not scans of what is held) and
/// taking a bundle is constant (amortized); at most `maximumHeldKeys` one-time prekeys and as
/// many one-time KEM prekeys are held: an upload beyond that is refused
/// (`PublishedPreKeysError.tooManyKeys`), since no `SessionManager` holds more.
public struct PublishedPreKeys: Sendable, Hashable, CustomStringConvertible {
    /// The most one-time prekeys held for one device, and separately the most one-time KEM
    /// prekeys: as many as a device ever holds (`SessionManager` keeps at most 100,000 of a
    /// kind), so an honest device never reaches it. An upload that would hold more is refused
    /// as a whole (`PublishedPreKeysError.tooManyKeys`); nothing held is dropped for it.
    public static let maximumHeldKeys = 100_000

    /// How many ids of one-time prekeys handed out are remembered, and separately of one-time
    /// KEM prekeys; beyond it the oldest are forgotten. A retried upload is idempotent as long
    /// as fewer keys of its kind were handed out since its own keys were (an upload holds at
    /// most `maximumHeldKeys`).
    public static let maximumRememberedHandedOutKeys = 100_000

    /// The device's identity key (a valid Ed25519 point).
    public let identityKey: Ed25519.PublicKey
    /// The installation's registration id (SPEC §9), put in every bundle; `nil` when no upload
    /// carried one. Set by the first upload that carries one; an upload with another one is a
    /// re-registration (`PublishedPreKeysError.otherRegistration`).
    public private(set) var registrationID: RegistrationID?
    /// The current signed prekey.
    public private(set) var signedPreKey: PreKeyUpload.SignedKey
    /// The last-resort KEM prekey of the current signed prekey (when it signs KEM prekeys).
    public private(set) var lastResortKEMPreKey: PreKeyBundle.KEMKey?
    /// The one-time prekeys held and not handed out yet.
    private var oneTime: KeyQueue<PreKeyBundle.OneTimeKey>
    /// The one-time KEM prekeys held and not handed out yet.
    private var oneTimeKEM: KeyQueue<PreKeyBundle.KEMKey>
    /// The ids of the one-time prekeys handed out, most recent last.
    private var handedOutOneTime: RecentIDs
    /// The ids of the one-time KEM prekeys handed out, most recent last.
    private var handedOutKEM: RecentIDs

    /// The one-time prekeys not handed out yet, oldest first (a copy: O(n); see
    /// `oneTimePreKeyCount`).
    public var oneTimePreKeys: [PreKeyBundle.OneTimeKey] { oneTime.keys }
    /// The one-time KEM prekeys not handed out yet, oldest first (a copy: O(n); see
    /// `oneTimeKEMPreKeyCount`).
    public var oneTimeKEMPreKeys: [PreKeyBundle.KEMKey] { oneTimeKEM.keys }
    /// The number of one-time prekeys not handed out yet.
    public var oneTimePreKeyCount: Int { oneTime.count }
    /// The number of one-time KEM prekeys not handed out yet.
    public var oneTimeKEMPreKeyCount: Int { oneTimeKEM.count }

    /// The prekeys of a device's first upload (or of an upload with a new identity key: the
    /// device registered again, and what was published before must be dropped).
    /// - Throws: `PublishedPreKeysError.invalidIdentityKey` for an identity key that is not a
    ///   valid point (`.primitive` when the point check cannot run), `.missingSignedPreKey` for
    ///   an upload without a signed prekey (every first upload has one), and the errors of
    ///   `merge(_:)` for its keys.
    public init(registering upload: PreKeyUpload) throws(PublishedPreKeysError) {
        do {
            try upload.identityKey.validatePoint()
        } catch .invalidKey {
            throw .invalidIdentityKey
        } catch {
            throw .primitive(error)
        }
        guard let signed = upload.signedPreKey else { throw .missingSignedPreKey }
        try Self.check(signed, lastResort: upload.lastResortKEMPreKey, identityKey: upload.identityKey)
        identityKey = upload.identityKey
        registrationID = upload.registrationID
        signedPreKey = signed
        lastResortKEMPreKey = upload.lastResortKEMPreKey
        oneTime = KeyQueue()
        oneTimeKEM = KeyQueue()
        handedOutOneTime = RecentIDs(limit: Self.maximumRememberedHandedOutKeys)
        handedOutKEM = RecentIDs(limit: Self.maximumRememberedHandedOutKeys)
        try merge(upload)
    }

    /// Adds what a later upload of the same device carries: a newer signed prekey (with its
    /// last-resort KEM prekey) replaces the current one; one-time keys are added. An upload
    /// sent again (a retry) changes nothing: a key already held is skipped, and so is a key
    /// whose id was handed out (it is never handed out again). Nothing changes when it throws.
    /// Linear in the upload's size.
    /// - Throws: `PublishedPreKeysError.otherIdentity` for an upload of another identity key,
    ///   `.otherRegistration` for one with another registration id than the one held (both a
    ///   re-registration: use `init(registering:)`), `.staleSignedPreKey` for a signed
    ///   prekey older than the held one, `.conflictingKey` for an id held with other bytes,
    ///   `.tooManyKeys` when more than `maximumHeldKeys` keys of a kind would be held,
    ///   `.invalidPayload` for KEM prekeys that do not match the signed prekey's `kem` bit,
    ///   `.invalidSignature` or `.invalidKey` for a key that does not check.
    public mutating func merge(_ upload: PreKeyUpload) throws(PublishedPreKeysError) {
        guard upload.identityKey == identityKey else { throw .otherIdentity }
        if let held = registrationID, let uploaded = upload.registrationID, held != uploaded {
            throw .otherRegistration(held: held, uploaded: uploaded)
        }
        // Everything is checked first; only then does anything change.
        var signed = signedPreKey
        var lastResort = lastResortKEMPreKey
        if let uploaded = upload.signedPreKey {
            guard uploaded.signsKEMPreKeys == (upload.lastResortKEMPreKey != nil) else { throw .invalidPayload }
            if uploaded.id == signedPreKey.id {
                guard uploaded == signedPreKey, upload.lastResortKEMPreKey == lastResortKEMPreKey else {
                    throw .conflictingKey(id: uploaded.id)
                }
            } else {
                guard Self.isNewer(uploaded.id, than: signedPreKey.id) else {
                    throw .staleSignedPreKey(held: signedPreKey.id, uploaded: uploaded.id)
                }
                try Self.check(uploaded, lastResort: upload.lastResortKEMPreKey, identityKey: identityKey)
                signed = uploaded
                lastResort = upload.lastResortKEMPreKey
            }
        }
        let addedOneTime = try oneTime.newKeys(
            in: upload.oneTimePreKeys, skipping: handedOutOneTime
        ) { (key: PreKeyBundle.OneTimeKey) throws(PublishedPreKeysError) in
            guard key.publicKey.isCanonical else { throw .invalidKey }
        }
        guard signed.signsKEMPreKeys || upload.oneTimeKEMPreKeys.isEmpty else { throw .invalidPayload }
        let identityKey = identityKey
        let addedKEM = try oneTimeKEM.newKeys(
            in: upload.oneTimeKEMPreKeys, skipping: handedOutKEM
        ) { (key: PreKeyBundle.KEMKey) throws(PublishedPreKeysError) in
            try Self.check(key, signedBy: identityKey)
        }
        signedPreKey = signed
        lastResortKEMPreKey = lastResort
        if registrationID == nil { registrationID = upload.registrationID }
        oneTime.append(contentsOf: addedOneTime)
        oneTimeKEM.append(contentsOf: addedKEM)
    }

    /// A bundle for a new session, taking (and removing) the oldest one-time prekey and, for a
    /// signed prekey that signs KEM prekeys, the oldest one-time KEM prekey, or the last-resort
    /// KEM prekey when none is left, and the registration id. Without one-time prekeys the bundle has none (the session
    /// then has less protection against a later compromise of the signed prekey: ask the
    /// device to upload more, see `oneTimePreKeyCount`). The ids taken are remembered
    /// (`maximumRememberedHandedOutKeys`): a later upload carrying them again adds nothing.
    public mutating func takeBundle() -> PreKeyBundle {
        let taken = oneTime.takeOldest()
        if let taken { handedOutOneTime.insert(taken.id) }
        var kem: PreKeyBundle.KEMKey?
        if signedPreKey.signsKEMPreKeys, let key = oneTimeKEM.takeOldest() {
            handedOutKEM.insert(key.id)
            kem = key
        }
        // `merge` checked that a signed prekey that signs KEM prekeys has its last-resort one.
        return PreKeyBundle(
            unchecked: identityKey, signedPreKey: signedPreKey, oneTimePreKey: taken,
            kemPreKey: signedPreKey.signsKEMPreKeys ? kem ?? lastResortKEMPreKey : nil, registrationID: registrationID)
    }

    /// Everything held, as an upload (without the ids handed out: to keep a value with them,
    /// use `serialized`).
    public var currentUpload: PreKeyUpload {
        PreKeyUpload(
            identityKey: identityKey, signedPreKey: signedPreKey, lastResortKEMPreKey: lastResortKEMPreKey,
            oneTimePreKeys: oneTimePreKeys, oneTimeKEMPreKeys: oneTimeKEMPreKeys, registrationID: registrationID)
    }

    /// The counts, never more (all of it is public anyway).
    public var description: String {
        "PublishedPreKeys(signed prekey \(signedPreKey.id), \(oneTime.count) one-time, "
            + "\(oneTimeKEM.count) one-time KEM\(lastResortKEMPreKey == nil ? "" : ", last-resort KEM \(lastResortKEMPreKey?.id ?? 0)"), "
            + "\(handedOutOneTime.count) + \(handedOutKEM.count) handed-out ids remembered)"
    }

    // MARK: Encoding

    /// The magic of the stored form.
    static let magic: [UInt8] = Array("SKPP".utf8)
    /// The stored form's version.
    static let formatVersion: UInt8 = 1

    /// The stored form, for a server's database (this layout is the library's; integers
    /// big-endian):
    ///
    ///     published = "SKPP" || u8(version = 1) || u32(len) || currentUpload.serialized (len bytes)
    ///                 || u32(n) || n × u32(one-time prekey id handed out, oldest first)
    ///                 || u32(m) || m × u32(one-time KEM prekey id handed out, oldest first)
    public var serialized: [UInt8] {
        let upload = currentUpload.serialized
        var out = Self.magic + [Self.formatVersion]
        out.reserveCapacity(out.count + 12 + upload.count + 4 * (handedOutOneTime.count + handedOutKEM.count))
        out.appendBigEndian(UInt32(truncatingIfNeeded: upload.count))
        out.append(contentsOf: upload)
        for ids in [handedOutOneTime.ids, handedOutKEM.ids] {
            out.appendBigEndian(UInt32(truncatingIfNeeded: ids.count))
            for id in ids { out.appendBigEndian(id) }
        }
        return out
    }

    /// Decodes the stored form (`serialized`) strictly and checks every key again, as
    /// `init(registering:)` does.
    /// - Throws: `PublishedPreKeysError.invalidPayload` for a wrong magic, a truncated field,
    ///   trailing bytes, more than `maximumRememberedHandedOutKeys` ids of a kind, an id
    ///   repeated or both held and handed out; `.unsupportedVersion` for another version; the
    ///   errors of `init(registering:)`.
    public init(serialized bytes: [UInt8]) throws(PublishedPreKeysError) {
        var reader = ByteReader(bytes)
        let upload: PreKeyUpload
        var handedOut: [[UInt32]] = []
        do {
            guard try reader.take(4).elementsEqual(Self.magic) else { throw PublishedPreKeysError.invalidPayload }
            guard try reader.byte() == Self.formatVersion else { throw PublishedPreKeysError.unsupportedVersion }
            let length = try reader.u32()
            guard length <= UInt32(bytes.count) else { throw PublishedPreKeysError.invalidPayload }
            upload = try PreKeyUpload(serialized: try reader.array(Int(length)))
            for _ in 0 ..< 2 {
                let count = try reader.u32()
                guard count <= UInt32(Self.maximumRememberedHandedOutKeys) else { throw PublishedPreKeysError.invalidPayload }
                var ids: [UInt32] = []
                ids.reserveCapacity(Int(count))
                for _ in 0 ..< count { ids.append(try reader.u32()) }
                handedOut.append(ids)
            }
            guard reader.isAtEnd else { throw PublishedPreKeysError.invalidPayload }
        } catch let error as PublishedPreKeysError {
            throw error
        } catch let error as SessionError {
            throw PublishedPreKeysError(error)
        } catch {
            throw .invalidPayload
        }
        let handedOutOneTimeIDs = handedOut.first ?? []
        let handedOutKEMIDs = handedOut.last ?? []
        try self.init(registering: upload)
        // `serialized` never repeats an id.
        guard oneTime.count == upload.oneTimePreKeys.count, oneTimeKEM.count == upload.oneTimeKEMPreKeys.count else {
            throw .invalidPayload
        }
        for id in handedOutOneTimeIDs {
            guard oneTime.key(id: id) == nil, handedOutOneTime.insert(id) else { throw .invalidPayload }
        }
        for id in handedOutKEMIDs {
            guard oneTimeKEM.key(id: id) == nil, handedOutKEM.insert(id) else { throw .invalidPayload }
        }
    }

    // MARK: Checks

    /// Whether the signed prekey id `id` is newer than `held`, in the order `LocalPreKeys`
    /// issues ids (increasing by one, wrapping after `UInt32.max`): at most 2^31 − 1 ahead.
    static func isNewer(_ id: UInt32, than held: UInt32) -> Bool {
        let distance = id &- held
        return distance != 0 && distance < 1 << 31
    }

    /// Checks a signed prekey and its last-resort KEM prekey, as an initiator checks a bundle of
    /// them (signatures with `identityKey`, a canonical SPK, a well-formed ML-KEM key).
    private static func check(
        _ signed: PreKeyUpload.SignedKey, lastResort: PreKeyBundle.KEMKey?, identityKey: Ed25519.PublicKey
    ) throws(PublishedPreKeysError) {
        guard signed.signsKEMPreKeys == (lastResort != nil) else { throw .invalidPayload }
        do {
            _ = try X3DH.checkBundle(PreKeyBundle(
                unchecked: identityKey, signedPreKey: signed, oneTimePreKey: nil, kemPreKey: lastResort, registrationID: nil))
        } catch {
            throw PublishedPreKeysError(error)
        }
    }

    /// Checks a one-time KEM prekey's signature and key.
    private static func check(_ key: PreKeyBundle.KEMKey, signedBy identityKey: Ed25519.PublicKey) throws(PublishedPreKeysError) {
        guard identityKey.isValidSignature(key.signature, for: KEMPreKey.signedBytes(publicKey: key.publicKey)) else {
            throw .invalidSignature
        }
        do { _ = try KEMEncapsulationKey(rawRepresentation: key.publicKey) } catch { throw PublishedPreKeysError(error) }
    }
}

/// A key `PublishedPreKeys` holds by id.
protocol IdentifiedPreKey: Sendable, Hashable {
    /// The key's id.
    var id: UInt32 { get }
}

extension PreKeyBundle.OneTimeKey: IdentifiedPreKey {}
extension PreKeyBundle.KEMKey: IdentifiedPreKey {}

/// One-time keys of one kind, oldest first, indexed by id: finding one, adding one and taking
/// the oldest are constant time (amortized).
struct KeyQueue<Key: IdentifiedPreKey>: Sendable, Hashable {
    /// The ids in the order the keys arrived; `order[head...]` are held.
    private var order: [UInt32] = []
    private var head = 0
    private var byID: [UInt32: Key] = [:]

    /// The number of keys held.
    var count: Int { byID.count }

    /// The held key with `id`.
    func key(id: UInt32) -> Key? { byID[id] }

    /// The keys, oldest first.
    var keys: [Key] { order[head...].compactMap { byID[$0] } }

    /// Adds a key whose id is not held.
    mutating func append(_ key: Key) {
        guard byID.updateValue(key, forKey: key.id) == nil else { return }
        order.append(key.id)
    }

    /// Adds keys whose ids are not held (each once).
    mutating func append(contentsOf keys: [Key]) {
        guard !keys.isEmpty else { return }
        byID.reserveCapacity(byID.count + keys.count)
        order.reserveCapacity(order.count + keys.count)
        for key in keys { append(key) }
    }

    /// Removes and returns the oldest key.
    mutating func takeOldest() -> Key? {
        while head < order.count {
            let id = order[head]
            head += 1
            if head >= 1024, head * 2 >= order.count {
                order.removeFirst(head)
                head = 0
            }
            if let key = byID.removeValue(forKey: id) { return key }
        }
        return nil
    }

    /// The keys of `keys` to add: those neither held nor with an id in `handedOut` (each
    /// checked with `check` first), in their order, each id once.
    /// - Throws: `PublishedPreKeysError.conflictingKey` for an id held (or repeated in `keys`)
    ///   with other bytes, `.tooManyKeys` when more than `PublishedPreKeys.maximumHeldKeys`
    ///   would be held, and the errors of `check`.
    func newKeys(
        in keys: [Key], skipping handedOut: RecentIDs, check: (Key) throws(PublishedPreKeysError) -> Void
    ) throws(PublishedPreKeysError) -> [Key] {
        var added: [Key] = []
        var addedByID: [UInt32: Key] = [:]
        for (position, key) in keys.enumerated() {
            if let held = byID[key.id] ?? addedByID[key.id] {
                guard held == key else { throw .conflictingKey(id: key.id) }
                continue
            }
            if handedOut.contains(key.id) { continue }
            try check(key)
            guard count + added.count < PublishedPreKeys.maximumHeldKeys else {
                throw .tooManyKeys(limit: PublishedPreKeys.maximumHeldKeys)
            }
            if added.isEmpty {
                // At most the rest of the keys are added: size for them once, not key by key.
                added.reserveCapacity(keys.count - position)
                addedByID.reserveCapacity(keys.count - position)
            }
            addedByID[key.id] = key
            added.append(key)
        }
        return added
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.order[lhs.head...].elementsEqual(rhs.order[rhs.head...]) && lhs.byID == rhs.byID
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for id in order[head...] {
            hasher.combine(id)
            hasher.combine(byID[id])
        }
    }
}

/// The most recent ids of a kind, at most `limit`: membership in constant time, the oldest
/// forgotten first.
struct RecentIDs: Sendable, Hashable {
    private var order: [UInt32] = []
    private var head = 0
    private var members: Set<UInt32> = []
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// The number of ids remembered.
    var count: Int { members.count }

    /// The ids remembered, oldest first.
    var ids: ArraySlice<UInt32> { order[head...] }

    /// Whether `id` is remembered.
    func contains(_ id: UInt32) -> Bool { members.contains(id) }

    /// Remembers `id` (forgetting the oldest beyond the limit); `false` when it already was.
    @discardableResult
    mutating func insert(_ id: UInt32) -> Bool {
        guard members.insert(id).inserted else { return false }
        order.append(id)
        if members.count > limit {
            members.remove(order[head])
            head += 1
            if head >= 1024, head * 2 >= order.count {
                order.removeFirst(head)
                head = 0
            }
        }
        return true
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.ids.elementsEqual(rhs.ids) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for id in ids { hasher.combine(id) }
    }
}

extension PreKeyBundle {
    /// A bundle from parts already checked (a 64-byte signature, as every `SignedKey` holds).
    init(
        unchecked identityKey: Ed25519.PublicKey, signedPreKey: PreKeyUpload.SignedKey, oneTimePreKey: OneTimeKey?, kemPreKey: KEMKey?,
        registrationID: RegistrationID?
    ) {
        self.identityKey = identityKey
        signedPreKeyID = signedPreKey.id
        self.signedPreKey = signedPreKey.publicKey
        signedPreKeySignature = signedPreKey.signature
        self.oneTimePreKey = oneTimePreKey
        self.kemPreKey = kemPreKey
        self.registrationID = registrationID
    }
}
