/// A long-lived identity in a backend's form: the Ed25519 seed, signing key and public key.
/// Its X25519 private key (SPEC §1 ed→x private) is derived again for every X3DH, as the
/// specification is written.
struct ReferenceIdentity<B: ReferenceBackend> {
    let seed: [UInt8]
    let signingKey: B.SigningKey
    let publicKey: [UInt8]

    init(seed: [UInt8]) throws {
        self.seed = seed
        signingKey = try B.signingKey(seed: seed)
        publicKey = B.publicKey(of: signingKey)
    }

    /// DH(x(IK).sk, publicKey) into `output`, converting the seed on the way.
    func agreement(with publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws {
        var secret = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        defer { secret = (0, 0, 0, 0) }
        try withUnsafeMutableBytes(of: &secret) { x in
            seed.withUnsafeBytes { B.ed25519SeedToX25519Secret($0, into: x) }
            try B.x25519(secret: UnsafeRawBufferPointer(x), publicKey: publicKey, into: output)
        }
    }
}

/// A prekey bundle as it arrives (SPEC §3).
struct ReferenceBundle {
    var identityKey: [UInt8]
    var signedPreKey: [UInt8]
    var signedPreKeyID: UInt32
    var signature: [UInt8]
    var oneTimePreKey: [UInt8]?
    var oneTimePreKeyID: UInt32?
}

/// X3DH's result: SK and AD.
struct ReferenceX3DHResult: Equatable {
    var sharedSecret: [UInt8]
    var associatedData: [UInt8]
}

/// SPEC §3 X3DH, composed naively from a backend's primitives.
enum ReferenceX3DH<B: ReferenceBackend> {
    /// Alice's side: verify the bundle, then the three or four DHs and HKDF.
    static func initiate(
        identity: ReferenceIdentity<B>, ephemeral: B.AgreementKey, bundle: ReferenceBundle
    ) throws -> ReferenceX3DHResult {
        let canonical = bundle.signedPreKey.withUnsafeBytes(isCanonicalX25519)
            && (bundle.oneTimePreKey?.withUnsafeBytes(isCanonicalX25519) ?? true)
        guard canonical else { throw ReferenceError.invalidKey }
        let encoded = [ReferenceConstants.signalKeyType] + bundle.signedPreKey
        let verifier = try B.verifyingKey(bundle.identityKey)
        let valid = bundle.signature.withUnsafeBytes { s in encoded.withUnsafeBytes { B.verify(s, of: $0, with: verifier) } }
        guard valid else { throw ReferenceError.invalidSignature }
        var peer = [UInt8](repeating: 0, count: 32)
        try bundle.identityKey.withUnsafeBytes { ik in
            try peer.withUnsafeMutableBytes { try B.ed25519PublicKeyToX25519(ik, into: $0) }
        }
        var ikm = [UInt8](repeating: 0xff, count: bundle.oneTimePreKey == nil ? 128 : 160)
        try ikm.withUnsafeMutableBytes { k in
            try bundle.signedPreKey.withUnsafeBytes { spk in
                try identity.agreement(with: spk, into: slice(k, 32))
                try peer.withUnsafeBytes { try B.x25519(ephemeral, publicKey: $0, into: slice(k, 64)) }
                try B.x25519(ephemeral, publicKey: spk, into: slice(k, 96))
            }
            if let opk = bundle.oneTimePreKey {
                try opk.withUnsafeBytes { try B.x25519(ephemeral, publicKey: $0, into: slice(k, 128)) }
            }
        }
        return ReferenceX3DHResult(
            sharedSecret: deriveSharedSecret(ikm), associatedData: identity.publicKey + bundle.identityKey)
    }

    /// Bob's side, from Alice's identity key and ephemeral key.
    static func respond(
        identity: ReferenceIdentity<B>, signedPreKey: B.AgreementKey, oneTimePreKey: B.AgreementKey?,
        initiatorIdentity: [UInt8], initiatorEphemeral: [UInt8]
    ) throws -> ReferenceX3DHResult {
        guard initiatorEphemeral.withUnsafeBytes(isCanonicalX25519) else { throw ReferenceError.invalidKey }
        var peer = [UInt8](repeating: 0, count: 32)
        try initiatorIdentity.withUnsafeBytes { ik in
            try peer.withUnsafeMutableBytes { try B.ed25519PublicKeyToX25519(ik, into: $0) }
        }
        var ikm = [UInt8](repeating: 0xff, count: oneTimePreKey == nil ? 128 : 160)
        try ikm.withUnsafeMutableBytes { k in
            try initiatorEphemeral.withUnsafeBytes { ek in
                try peer.withUnsafeBytes { try B.x25519(signedPreKey, publicKey: $0, into: slice(k, 32)) }
                try identity.agreement(with: ek, into: slice(k, 64))
                try B.x25519(signedPreKey, publicKey: ek, into: slice(k, 96))
                if let oneTimePreKey { try B.x25519(oneTimePreKey, publicKey: ek, into: slice(k, 128)) }
            }
        }
        return ReferenceX3DHResult(
            sharedSecret: deriveSharedSecret(ikm), associatedData: initiatorIdentity + identity.publicKey)
    }

    /// SK = HKDF(ZERO32, ikm, "SessionKit X3DH v1", 32).
    static func deriveSharedSecret(_ ikm: [UInt8]) -> [UInt8] {
        var sharedSecret = [UInt8](repeating: 0, count: 32)
        sharedSecret.withUnsafeMutableBytes { out in
            ReferenceConstants.zero32.withUnsafeBytes { salt in
                ikm.withUnsafeBytes { k in
                    ReferenceConstants.x3dhInfo.withUnsafeBytes { info in
                        B.hkdfSHA256(salt: salt, inputKeyMaterial: k, info: info, into: out)
                    }
                }
            }
        }
        return sharedSecret
    }
}

/// 32 bytes of `buffer` from `offset`.
@inline(__always)
func slice(_ buffer: UnsafeMutableRawBufferPointer, _ offset: Int, _ count: Int = 32) -> UnsafeMutableRawBufferPointer {
    UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
}
