import SignalPrimitives

/// What a server keeps for one device: the prekeys it uploaded, from which the server hands out
/// bundles. For backends (a relay, a chat SDK's server function) that must hand out each
/// one-time prekey and each one-time KEM prekey at most once, and the last-resort KEM prekey
/// once no one-time KEM prekey is left.
///
/// It holds public material only. Keep one value per device (`ProtocolAddress`), persist it as
/// your server does (`PreKeyUpload`'s `serialized` of `currentUpload` is one way), and take
/// bundles under the server's own lock so that two requests never get the same one-time key:
///
///     var published = try PublishedPreKeys(registering: upload)   // the device's first upload
///     try published.merge(laterUpload)                             // what maintainPreKeys() sends next
///     let bundle = published.takeBundle()                          // one per new session
///
/// Every key is checked as it arrives (signatures with the upload's identity key, canonical
/// X25519 keys, well-formed ML-KEM keys), so a bundle it hands out passes the initiator's checks.
public struct PublishedPreKeys: Sendable, Hashable, CustomStringConvertible {
    /// The device's identity key.
    public let identityKey: Ed25519.PublicKey
    /// The current signed prekey.
    public private(set) var signedPreKey: PreKeyUpload.SignedKey
    /// The last-resort KEM prekey of the current signed prekey (when it signs KEM prekeys).
    public private(set) var lastResortKEMPreKey: PreKeyBundle.KEMKey?
    /// The one-time prekeys not handed out yet, oldest first.
    public private(set) var oneTimePreKeys: [PreKeyBundle.OneTimeKey]
    /// The one-time KEM prekeys not handed out yet, oldest first.
    public private(set) var oneTimeKEMPreKeys: [PreKeyBundle.KEMKey]

    /// The prekeys of a device's first upload (or of an upload with a new identity key: the
    /// device registered again, and what was published before must be dropped).
    /// - Throws: `SessionError.invalidPayload` for an upload without a signed prekey (every
    ///   first upload has one) or with a repeated id; `.invalidSignature` or `.invalidKey` for a
    ///   key that does not check (see the type's documentation).
    public init(registering upload: PreKeyUpload) throws(SessionError) {
        guard let signed = upload.signedPreKey else { throw .invalidPayload }
        identityKey = upload.identityKey
        signedPreKey = signed
        lastResortKEMPreKey = upload.lastResortKEMPreKey
        oneTimePreKeys = []
        oneTimeKEMPreKeys = []
        try merge(upload)
    }

    /// Adds what a later upload of the same device carries: a new signed prekey (with its
    /// last-resort KEM prekey) replaces the current one; one-time keys are added. An upload
    /// sent twice (a retry) changes nothing; a key with an id already held but other bytes is
    /// refused. Nothing changes when it throws.
    /// - Throws: `SessionError.untrustedIdentity` for an upload of another identity key
    ///   (a re-registration: use `init(registering:)`), `.invalidPayload` for an id held with
    ///   other bytes or KEM prekeys for a signed prekey that does not sign them, `.invalidSignature` or `.invalidKey` for a key that does not check.
    public mutating func merge(_ upload: PreKeyUpload) throws(SessionError) {
        guard upload.identityKey == identityKey else { throw .untrustedIdentity }
        var next = self
        if let signed = upload.signedPreKey {
            next.signedPreKey = signed
            next.lastResortKEMPreKey = upload.lastResortKEMPreKey
        }
        // The signed prekey and its last-resort KEM prekey, as a bundle without one-time keys.
        _ = try X3DH.checkBundle(try next.bundle(oneTimePreKey: nil, kemPreKey: nil))
        for key in upload.oneTimePreKeys {
            guard key.publicKey.isCanonical else { throw .invalidKey }
            if let held = next.oneTimePreKeys.first(where: { $0.id == key.id }) {
                guard held == key else { throw .invalidPayload }
                continue
            }
            next.oneTimePreKeys.append(key)
        }
        guard next.signedPreKey.signsKEMPreKeys || upload.oneTimeKEMPreKeys.isEmpty else { throw .invalidPayload }
        for key in upload.oneTimeKEMPreKeys {
            try Self.check(key, signedBy: identityKey)
            if let held = next.oneTimeKEMPreKeys.first(where: { $0.id == key.id }) {
                guard held == key else { throw .invalidPayload }
                continue
            }
            next.oneTimeKEMPreKeys.append(key)
        }
        self = next
    }

    /// A bundle for a new session, taking (and removing) the oldest one-time prekey and, for a
    /// signed prekey that signs KEM prekeys, the oldest one-time KEM prekey, or the last-resort
    /// KEM prekey when none is left. Without one-time prekeys the bundle has none (the session
    /// then has less protection against a later compromise of the signed prekey: ask the
    /// device to upload more, see `oneTimePreKeys`).
    public mutating func takeBundle() -> PreKeyBundle {
        let oneTime = oneTimePreKeys.isEmpty ? nil : oneTimePreKeys.removeFirst()
        let kem = signedPreKey.signsKEMPreKeys && !oneTimeKEMPreKeys.isEmpty ? oneTimeKEMPreKeys.removeFirst() : nil
        // `merge` checked that a signed prekey that signs KEM prekeys has its last-resort one.
        return PreKeyBundle(
            unchecked: identityKey, signedPreKey: signedPreKey, oneTimePreKey: oneTime,
            kemPreKey: signedPreKey.signsKEMPreKeys ? kem ?? lastResortKEMPreKey : nil)
    }

    /// Everything held, as an upload (for example to persist it and to restore it with
    /// `init(registering:)`).
    public var currentUpload: PreKeyUpload {
        PreKeyUpload(
            identityKey: identityKey, signedPreKey: signedPreKey, lastResortKEMPreKey: lastResortKEMPreKey,
            oneTimePreKeys: oneTimePreKeys, oneTimeKEMPreKeys: oneTimeKEMPreKeys)
    }

    /// The counts, never more (all of it is public anyway).
    public var description: String {
        "PublishedPreKeys(signed prekey \(signedPreKey.id), \(oneTimePreKeys.count) one-time, "
            + "\(oneTimeKEMPreKeys.count) one-time KEM\(lastResortKEMPreKey == nil ? "" : ", last-resort KEM \(lastResortKEMPreKey?.id ?? 0)"))"
    }

    /// The bundle of the current signed prekey with the given one-time keys.
    /// - Throws: `SessionError.invalidPayload` when the signed prekey signs KEM prekeys and no
    ///   KEM prekey is available, or does not and one is given.
    private func bundle(oneTimePreKey: PreKeyBundle.OneTimeKey?, kemPreKey: PreKeyBundle.KEMKey?) throws(SessionError) -> PreKeyBundle {
        let kem: PreKeyBundle.KEMKey?
        if signedPreKey.signsKEMPreKeys {
            guard let chosen = kemPreKey ?? lastResortKEMPreKey else { throw .invalidPayload }
            kem = chosen
        } else {
            guard kemPreKey == nil, lastResortKEMPreKey == nil else { throw .invalidPayload }
            kem = nil
        }
        return PreKeyBundle(unchecked: identityKey, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey, kemPreKey: kem)
    }

    /// Checks a one-time KEM prekey's signature and key.
    private static func check(_ key: PreKeyBundle.KEMKey, signedBy identityKey: Ed25519.PublicKey) throws(SessionError) {
        guard identityKey.isValidSignature(key.signature, for: KEMPreKey.signedBytes(publicKey: key.publicKey)) else {
            throw .invalidSignature
        }
        _ = try KEMEncapsulationKey(rawRepresentation: key.publicKey)
    }
}

extension PreKeyBundle {
    /// A bundle from parts already checked (a 64-byte signature, as every `SignedKey` holds).
    init(unchecked identityKey: Ed25519.PublicKey, signedPreKey: PreKeyUpload.SignedKey, oneTimePreKey: OneTimeKey?, kemPreKey: KEMKey?) {
        self.identityKey = identityKey
        signedPreKeyID = signedPreKey.id
        self.signedPreKey = signedPreKey.publicKey
        signedPreKeySignature = signedPreKey.signature
        self.oneTimePreKey = oneTimePreKey
        self.kemPreKey = kemPreKey
    }
}
