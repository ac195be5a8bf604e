/// A device of a user: sessions and trust records exist per (user, device), and both parties'
/// addresses are bound into every session (SPEC §3's AD) and every sender-key message (§5).
///
/// The user id is compared as UTF-8 bytes, never as a Swift `String` (which equates "é" and
/// "e\u{301}"): use canonical ids assigned by your server, never user-typed text.
public struct ProtocolAddress: Hashable, Sendable, CustomStringConvertible {
    /// The longest user id, in UTF-8 bytes.
    public static let maximumUserIDByteCount = 255

    /// The stable user identifier.
    public let userID: String
    /// The device number within the user's account.
    public let deviceID: UInt32
    /// `Encode(address) = u8(len(uid)) || uid || u32(device_id)` (SPEC §1).
    @_spi(Storage) @_spi(Testing) public let encoded: [UInt8]

    /// Creates an address.
    /// - Throws: `SessionError.invalidAddress` when the user id is empty or longer than 255
    ///   UTF-8 bytes.
    public init(userID: String, deviceID: UInt32) throws(SessionError) {
        let uid = Array(userID.utf8)
        guard (1 ... Self.maximumUserIDByteCount).contains(uid.count) else { throw .invalidAddress }
        self.userID = userID
        self.deviceID = deviceID
        var encoded = [UInt8]()
        encoded.reserveCapacity(uid.count + 5)
        encoded.append(UInt8(uid.count))
        encoded.append(contentsOf: uid)
        encoded.appendBigEndian(deviceID)
        self.encoded = encoded
    }

    /// The UTF-8 bytes of the user id.
    @_spi(Storage) @_spi(Testing) public var userIDBytes: ArraySlice<UInt8> { encoded[1 ..< encoded.count - 4] }

    /// Whether `other` is a device of the same user (user ids equal as bytes).
    @_spi(Testing) public func isSameUser(as other: ProtocolAddress) -> Bool { userIDBytes == other.userIDBytes }

    /// Equality of `Encode(address)`: the user id's bytes and the device id.
    public static func == (a: ProtocolAddress, b: ProtocolAddress) -> Bool { a.encoded == b.encoded }

    /// Hashes `Encode(address)`.
    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }

    /// `user.device`.
    public var description: String { "\(userID).\(deviceID)" }
}

/// The hook through which SessionKit asks whether a peer's identity key may be used, and
/// through which it records the keys it has seen.
///
/// The `Verification` module's trust store conforms (trust on first use); an app may supply
/// its own policy. Checking never writes: SessionKit asks `evaluateIdentity` before encrypting
/// to a device, when a bundle starts a session and when a message decrypts, and calls
/// `recordIdentity` only once the operation that saw the key has succeeded (a bundle refused
/// for any reason, a message that fails to decrypt or a failed processing step records nothing).
public protocol IdentityTrustEvaluator: Sendable {
    /// What recording `identityKey` for `address` would observe, and whether encrypting to it is
    /// allowed now (not for a changed key, nor after a change the app has not accepted).
    /// Records nothing.
    func evaluateIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws -> TrustDecision

    /// Records `identityKey` for `address`: on first use it becomes the trusted key; a different
    /// key replaces it and awaits the app's acceptance. Returns what was observed.
    func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws -> IdentityObservation
}

/// What a trust evaluator concluded about an identity key (`IdentityTrustEvaluator`).
public struct TrustDecision: Sendable, Hashable {
    /// What the evaluator saw: the first key for the address, the recorded one, or a change.
    public let observation: IdentityObservation
    /// Whether encrypting to the key is allowed now.
    public let allowsSending: Bool

    /// Creates a decision.
    public init(observation: IdentityObservation, allowsSending: Bool) {
        self.observation = observation
        self.allowsSending = allowsSending
    }
}

/// What a trust store concluded when it saw an identity key for a contact.
public enum IdentityObservation: Equatable, Hashable, Sendable {
    /// No key was known: this one is now recorded and trusted on first use.
    case firstUse
    /// The key is the one on record (sending is allowed unless an earlier change still
    /// awaits acceptance).
    case unchanged
    /// The key differs from the one on record, which was `previous`. The contact is now
    /// `unverified` and sending is refused until the app accepts the new key.
    case changed(previous: Ed25519.PublicKey)
}
