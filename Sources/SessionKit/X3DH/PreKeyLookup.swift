import SignalPrimitives

/// Read access to a responder's private prekeys, by id, and to its EK_A replay records
/// (SPEC §3).
///
/// SessionKit only reads through this protocol: running X3DH as a responder never deletes a
/// prekey or records an EK_A itself. It reports what it used (`PreKeyConsumption`) once the
/// whole prekey message has decrypted, and the store applies it in the same write that stores
/// the new session (`ProtocolStore.commit(_:)`). A failed message therefore consumes
/// and records nothing.
@_spi(Testing) public protocol PreKeyLookup {
    /// The signed prekey with `id`, or `nil` when it was never issued or has been removed.
    func signedPreKey(id: UInt32) -> SignedPreKey?
    /// The one-time prekey with `id`, or `nil` when it was never issued or already used.
    func oneTimePreKey(id: UInt32) -> OneTimePreKey?
    /// The KEM prekey with `id` (one-time or last resort), or `nil` when it was never issued,
    /// was used (one-time) or was rotated out (last resort).
    func kemPreKey(id: UInt32) -> KEMPreKey?
    /// Whether X3DH already ran with `baseKey` as EK_A under the signed prekey `signedPreKeyID`.
    func hasRecordedBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) -> Bool
    /// Whether a prekey message without a KEM part may still use the classic signed prekey
    /// `signedPreKeyID`: `false` once the device's in-flight window after it switched to
    /// signed prekeys with a KEM prekey is over (`PreKeyPolicy.classicPreKeyMessageWindow`).
    /// `true` by default.
    func acceptsClassicPreKeyMessages(signedPreKeyID: UInt32) -> Bool
}

extension PreKeyLookup {
    /// Classic prekey messages are accepted (a lookup that knows no time).
    public func acceptsClassicPreKeyMessages(signedPreKeyID: UInt32) -> Bool { true }
}

/// What a completed X3DH used up and recorded (SPEC §3), to apply in the same store write that
/// stores the session it created: delete the one-time prekey and the one-time KEM prekey, and
/// record EK_A under the signed prekey.
@_spi(Testing) public struct PreKeyConsumption: Sendable, Hashable, CustomStringConvertible {
    /// The signed prekey X3DH used, under which `baseKey` is recorded.
    public let signedPreKeyID: UInt32
    /// EK_A, to record against replays.
    public let baseKey: X25519.PublicKey
    /// The one-time prekey to delete, if one was used.
    public let oneTimePreKeyID: UInt32?
    /// The one-time KEM prekey to delete, if one was used (a last-resort one is kept).
    public let oneTimeKEMPreKeyID: UInt32?

    /// Creates a consumption record.
    public init(signedPreKeyID: UInt32, baseKey: X25519.PublicKey, oneTimePreKeyID: UInt32?, oneTimeKEMPreKeyID: UInt32?) {
        self.signedPreKeyID = signedPreKeyID
        self.baseKey = baseKey
        self.oneTimePreKeyID = oneTimePreKeyID
        self.oneTimeKEMPreKeyID = oneTimeKEMPreKeyID
    }

    /// The ids, never a secret.
    public var description: String {
        "PreKeyConsumption(spk: \(signedPreKeyID), opk: \(oneTimePreKeyID.map(String.init) ?? "none"), "
            + "kem: \(oneTimeKEMPreKeyID.map(String.init) ?? "none"), EK_A: \(baseKey.hexString))"
    }
}

/// An in-memory set of a responder's prekeys and replay records: what a prekey message needs.
@_spi(Testing) public struct PreKeySet: PreKeyLookup, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The signed prekeys, by id.
    public private(set) var signedPreKeys: [UInt32: SignedPreKey]
    /// The one-time prekeys not used yet, by id.
    public private(set) var oneTimePreKeys: [UInt32: OneTimePreKey]
    /// The KEM prekeys held, by id.
    public private(set) var kemPreKeys: [UInt32: KEMPreKey]
    /// The EK_A values recorded under each signed prekey id.
    public private(set) var recordedBaseKeys: [UInt32: Set<X25519.PublicKey>]
    /// The classic signed prekeys past their in-flight window for classic prekey messages
    /// (`PreKeyLookup.acceptsClassicPreKeyMessages(signedPreKeyID:)`).
    public private(set) var signedPreKeysRefusingClassicMessages: Set<UInt32>

    /// An empty set (an initiator that has published nothing).
    public init() {
        signedPreKeys = [:]
        oneTimePreKeys = [:]
        kemPreKeys = [:]
        recordedBaseKeys = [:]
        signedPreKeysRefusingClassicMessages = []
    }

    /// A set holding the given keys (a later key with the same id wins).
    public init(signedPreKeys: [SignedPreKey], oneTimePreKeys: [OneTimePreKey] = [], kemPreKeys: [KEMPreKey] = []) {
        self.init()
        for key in signedPreKeys { insert(key) }
        for key in oneTimePreKeys { insert(key) }
        for key in kemPreKeys { insert(key) }
    }

    /// Adds or replaces the signed prekey with `key.id`.
    public mutating func insert(_ key: SignedPreKey) { signedPreKeys[key.id] = key }

    /// Adds or replaces the one-time prekey with `key.id`.
    public mutating func insert(_ key: OneTimePreKey) { oneTimePreKeys[key.id] = key }

    /// Adds or replaces the KEM prekey with `key.id`.
    public mutating func insert(_ key: KEMPreKey) { kemPreKeys[key.id] = key }

    /// Records `baseKey` under the signed prekey `signedPreKeyID`.
    public mutating func recordBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) {
        recordedBaseKeys[signedPreKeyID, default: []].insert(baseKey)
    }

    /// Marks the signed prekey `signedPreKeyID` as past its window for classic prekey messages.
    public mutating func refuseClassicPreKeyMessages(signedPreKeyID: UInt32) {
        signedPreKeysRefusingClassicMessages.insert(signedPreKeyID)
    }

    /// Applies what an X3DH used: deletes the one-time prekeys and records EK_A.
    /// - Throws: `SessionError.unknownPreKey` when a one-time prekey to delete is not held
    ///   (nothing changed then).
    public mutating func apply(_ consumption: PreKeyConsumption) throws(SessionError) {
        if let id = consumption.oneTimePreKeyID, oneTimePreKeys[id] == nil { throw .unknownPreKey }
        if let id = consumption.oneTimeKEMPreKeyID, kemPreKeys[id]?.kind != .oneTime { throw .unknownPreKey }
        if let id = consumption.oneTimePreKeyID { oneTimePreKeys[id] = nil }
        if let id = consumption.oneTimeKEMPreKeyID { kemPreKeys[id] = nil }
        recordBaseKey(consumption.baseKey, signedPreKeyID: consumption.signedPreKeyID)
    }

    /// Removes the signed prekey `id` and its replay records; returns the key.
    @discardableResult
    public mutating func removeSignedPreKey(id: UInt32) -> SignedPreKey? {
        recordedBaseKeys[id] = nil
        return signedPreKeys.removeValue(forKey: id)
    }

    /// Removes the one-time prekey `id`; returns it.
    @discardableResult
    public mutating func removeOneTimePreKey(id: UInt32) -> OneTimePreKey? { oneTimePreKeys.removeValue(forKey: id) }

    /// The signed prekey with `id`, if held.
    public func signedPreKey(id: UInt32) -> SignedPreKey? { signedPreKeys[id] }

    /// The one-time prekey with `id`, if held.
    public func oneTimePreKey(id: UInt32) -> OneTimePreKey? { oneTimePreKeys[id] }

    /// The KEM prekey with `id`, if held.
    public func kemPreKey(id: UInt32) -> KEMPreKey? { kemPreKeys[id] }

    /// Whether `baseKey` is recorded under `signedPreKeyID`.
    public func hasRecordedBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) -> Bool {
        recordedBaseKeys[signedPreKeyID]?.contains(baseKey) ?? false
    }

    /// Whether classic prekey messages may still use `signedPreKeyID` (not marked by
    /// `refuseClassicPreKeyMessages(signedPreKeyID:)`).
    public func acceptsClassicPreKeyMessages(signedPreKeyID: UInt32) -> Bool {
        !signedPreKeysRefusingClassicMessages.contains(signedPreKeyID)
    }

    /// A redacted description: the ids only.
    public var description: String {
        "PreKeySet(signed: \(signedPreKeys.keys.sorted()), oneTime: \(oneTimePreKeys.count) keys, "
            + "kem: \(kemPreKeys.count) keys, secrets redacted)"
    }
    /// A redacted description: the ids only.
    public var debugDescription: String { description }
}
