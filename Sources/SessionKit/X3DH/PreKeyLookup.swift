/// Read access to a responder's private prekeys, by id (SPEC §3).
///
/// SessionKit only reads through this protocol: running X3DH as a responder never deletes a
/// one-time prekey itself. It reports the id it used (`SessionDecryption.consumedOneTimePreKeyID`)
/// once the whole prekey message has decrypted, and the caller deletes that prekey in the same
/// transaction that stores the new session. A failed message therefore consumes nothing.
public protocol PreKeyLookup {
    /// The signed prekey with `id`, or `nil` when it was never issued or has been removed.
    func signedPreKey(id: UInt32) -> SignedPreKey?
    /// The one-time prekey with `id`, or `nil` when it was never issued or already used.
    func oneTimePreKey(id: UInt32) -> OneTimePreKey?
}

/// An in-memory set of a responder's prekeys: signed prekeys and one-time prekeys by id.
public struct PreKeySet: PreKeyLookup, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The signed prekeys, by id.
    public private(set) var signedPreKeys: [UInt32: SignedPreKey]
    /// The one-time prekeys not used yet, by id.
    public private(set) var oneTimePreKeys: [UInt32: OneTimePreKey]

    /// An empty set (an initiator that has published nothing).
    public init() {
        signedPreKeys = [:]
        oneTimePreKeys = [:]
    }

    /// A set holding `signedPreKeys` and `oneTimePreKeys` (a later key with the same id wins).
    public init(signedPreKeys: [SignedPreKey], oneTimePreKeys: [OneTimePreKey] = []) {
        self.init()
        for key in signedPreKeys { insert(key) }
        for key in oneTimePreKeys { insert(key) }
    }

    /// Adds or replaces the signed prekey with `key.id`.
    public mutating func insert(_ key: SignedPreKey) { signedPreKeys[key.id] = key }

    /// Adds or replaces the one-time prekey with `key.id`.
    public mutating func insert(_ key: OneTimePreKey) { oneTimePreKeys[key.id] = key }

    /// Removes the signed prekey `id` (after rotation and its grace period); returns it.
    @discardableResult
    public mutating func removeSignedPreKey(id: UInt32) -> SignedPreKey? { signedPreKeys.removeValue(forKey: id) }

    /// Removes the one-time prekey `id` (after a decryption reported it consumed); returns it.
    @discardableResult
    public mutating func removeOneTimePreKey(id: UInt32) -> OneTimePreKey? { oneTimePreKeys.removeValue(forKey: id) }

    /// The signed prekey with `id`, if held.
    public func signedPreKey(id: UInt32) -> SignedPreKey? { signedPreKeys[id] }

    /// The one-time prekey with `id`, if held.
    public func oneTimePreKey(id: UInt32) -> OneTimePreKey? { oneTimePreKeys[id] }

    /// A redacted description: the ids only.
    public var description: String {
        "PreKeySet(signed: \(signedPreKeys.keys.sorted()), oneTime: \(oneTimePreKeys.count) keys, secrets redacted)"
    }
    /// A redacted description: the ids only.
    public var debugDescription: String { description }
}
