import SignalPrimitives

/// The public prekey material a device uploads to its server, which hands it out as
/// `PreKeyBundle`s (one one-time prekey per bundle, each at most once).
///
/// Produced by `LocalPreKeys.maintain(…)` (what changed: a rotated signed prekey and newly
/// generated one-time prekeys) and by `LocalPreKeys.fullUpload(identityKey:)` (everything
/// held, for a first registration). Holds no secret.
public struct PreKeyUpload: Sendable, Hashable, CustomStringConvertible {
    /// The public parts of a signed prekey.
    public struct SignedKey: Sendable, Hashable {
        /// Its id.
        public let id: UInt32
        /// Its X25519 public key (SPK).
        public let publicKey: X25519.PublicKey
        /// `Ed25519.sign(IK, 0x05 || SPK)`.
        public let signature: [UInt8]

        /// The public parts of `key`.
        public init(_ key: SignedPreKey) {
            id = key.id
            publicKey = key.publicKey
            signature = key.signature
        }
    }

    /// The device's identity key (IK).
    public let identityKey: Ed25519.PublicKey
    /// The signed prekey to publish, or `nil` when the published one is unchanged.
    public let signedPreKey: SignedKey?
    /// One-time prekeys to add to the published ones.
    public let oneTimePreKeys: [PreKeyBundle.OneTimeKey]

    /// Creates an upload from its parts.
    public init(identityKey: Ed25519.PublicKey, signedPreKey: SignedKey?, oneTimePreKeys: [PreKeyBundle.OneTimeKey]) {
        self.identityKey = identityKey
        self.signedPreKey = signedPreKey
        self.oneTimePreKeys = oneTimePreKeys
    }

    /// The bundle a server builds from this upload: the identity key, the signed prekey and
    /// `oneTimePreKey` (for example one of `oneTimePreKeys`, or `nil` when none is left).
    /// Returns `nil` when the upload carries no signed prekey.
    public func bundle(oneTimePreKey: PreKeyBundle.OneTimeKey?) -> PreKeyBundle? {
        guard let signedPreKey else { return nil }
        return PreKeyBundle(
            identityKey: identityKey, signedPreKeyID: signedPreKey.id, signedPreKey: signedPreKey.publicKey,
            signedPreKeySignature: signedPreKey.signature, oneTimePreKey: oneTimePreKey)
    }

    /// Whether there is nothing to upload.
    public var isEmpty: Bool { signedPreKey == nil && oneTimePreKeys.isEmpty }

    /// The signed prekey id and the number of one-time prekeys.
    public var description: String {
        "PreKeyUpload(signedPreKey: \(signedPreKey.map { String($0.id) } ?? "unchanged"), oneTimePreKeys: \(oneTimePreKeys.count))"
    }
}
