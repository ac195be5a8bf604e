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

    /// A 64-byte signature of `message`.
    func sign(_ message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 64)
        message.withUnsafeBytes { m in signature.withUnsafeMutableBytes { B.sign(m, with: signingKey, into: $0) } }
        return signature
    }

    /// `spk_sig = Ed25519.sign(IK, "SessionKit SPK v2" || Encode(SPK) || u8(kem))`.
    func signSignedPreKey(_ publicKey: [UInt8], kem: Bool) -> [UInt8] {
        sign(ReferenceX3DH<B>.signedPreKeyMessage(publicKey, kem: kem))
    }

    /// `kem_sig = Ed25519.sign(IK, "SessionKit KEM v2" || EncodeKEM(ek))`.
    func signKEMPreKey(_ encapsulationKey: [UInt8]) -> [UInt8] {
        sign(ReferenceX3DH<B>.kemPreKeyMessage(encapsulationKey))
    }
}

/// A prekey bundle as it arrives (SPEC §3), with its optional one-time and KEM prekeys.
struct ReferenceBundle {
    var identityKey: [UInt8]
    var signedPreKey: [UInt8]
    var signedPreKeyID: UInt32
    var signature: [UInt8]
    var oneTimePreKey: [UInt8]?
    var oneTimePreKeyID: UInt32?
    /// PQPK_B (an ML-KEM-768 `ek`, 1184 bytes), its id and kem_sig.
    var kemPreKey: [UInt8]? = nil
    var kemPreKeyID: UInt32? = nil
    var kemSignature: [UInt8]? = nil

    /// `0x26 || IK_B || u32(spk_id) || SPK_B || spk_sig || flags || [u32(opk_id) || OPK_B]
    /// || [u32(kem_id) || PQPK_B || kem_sig]`.
    var serialized: [UInt8] {
        var bytes: [UInt8] = [0x26] + identityKey
        bytes.appendU32(signedPreKeyID)
        bytes += signedPreKey + signature
        bytes.append((oneTimePreKey == nil ? 0 : 0x01) | (kemPreKey == nil ? 0 : 0x02))
        if let oneTimePreKey, let oneTimePreKeyID {
            bytes.appendU32(oneTimePreKeyID)
            bytes += oneTimePreKey
        }
        if let kemPreKey, let kemPreKeyID, let kemSignature {
            bytes.appendU32(kemPreKeyID)
            bytes += kemPreKey + kemSignature
        }
        return bytes
    }

    /// Decodes the layout only (SPEC §3): `invalidPayload` for an empty input, a wrong length
    /// or a flag bit outside 0–1, `unsupportedVersion` for a first byte other than 0x26.
    init(serialized bytes: [UInt8]) throws(ReferenceError) {
        guard let type = bytes.first else { throw .invalidPayload }
        guard type == 0x26 else { throw .unsupportedVersion }
        let base = 1 + 32 + 4 + 32 + 64 + 1
        guard bytes.count >= base, bytes[base - 1] & ~0x03 == 0 else { throw .invalidPayload }
        let flags = bytes[base - 1]
        let kemCount = 4 + ReferenceConstants.kemKeyCount + 64
        guard bytes.count == base + (flags & 0x01 != 0 ? 36 : 0) + (flags & 0x02 != 0 ? kemCount : 0) else {
            throw .invalidPayload
        }
        identityKey = Array(bytes[1..<33])
        signedPreKeyID = bytes.u32(at: 33)
        signedPreKey = Array(bytes[37..<69])
        signature = Array(bytes[69..<133])
        var offset = base
        if flags & 0x01 != 0 {
            oneTimePreKeyID = bytes.u32(at: offset)
            oneTimePreKey = Array(bytes[(offset + 4)..<(offset + 36)])
            offset += 36
        }
        if flags & 0x02 != 0 {
            kemPreKeyID = bytes.u32(at: offset)
            let keyEnd = offset + 4 + ReferenceConstants.kemKeyCount
            kemPreKey = Array(bytes[(offset + 4)..<keyEnd])
            kemSignature = Array(bytes[keyEnd..<(keyEnd + 64)])
        }
    }

    init(
        identityKey: [UInt8], signedPreKey: [UInt8], signedPreKeyID: UInt32, signature: [UInt8],
        oneTimePreKey: [UInt8]?, oneTimePreKeyID: UInt32?, kemPreKey: [UInt8]? = nil, kemPreKeyID: UInt32? = nil,
        kemSignature: [UInt8]? = nil
    ) {
        self.identityKey = identityKey
        self.signedPreKey = signedPreKey
        self.signedPreKeyID = signedPreKeyID
        self.signature = signature
        self.oneTimePreKey = oneTimePreKey
        self.oneTimePreKeyID = oneTimePreKeyID
        self.kemPreKey = kemPreKey
        self.kemPreKeyID = kemPreKeyID
        self.kemSignature = kemSignature
    }
}

/// The prefix P of a prekey message (SPEC §3–§4), with the fields the responder reads from it.
struct ReferencePrefix: Equatable {
    /// `IK_A || EK_A || u32(spk_id) || flags || [u32(opk_id)] || [u32(kem_id) || CT]`.
    var bytes: [UInt8]
    var identityKey: [UInt8]
    var baseKey: [UInt8]
    var signedPreKeyID: UInt32
    var oneTimePreKeyID: UInt32?
    var kemPreKeyID: UInt32?
    var ciphertext: [UInt8]?

    /// The prefix built from its fields.
    init(identityKey: [UInt8], baseKey: [UInt8], signedPreKeyID: UInt32, oneTimePreKeyID: UInt32?,
         kemPreKeyID: UInt32?, ciphertext: [UInt8]?) {
        var bytes = identityKey + baseKey
        bytes.appendU32(signedPreKeyID)
        bytes.append((oneTimePreKeyID == nil ? 0 : 0x01) | (ciphertext == nil ? 0 : 0x02))
        if let oneTimePreKeyID { bytes.appendU32(oneTimePreKeyID) }
        if let kemPreKeyID, let ciphertext {
            bytes.appendU32(kemPreKeyID)
            bytes += ciphertext
        }
        self.bytes = bytes
        self.identityKey = identityKey
        self.baseKey = baseKey
        self.signedPreKeyID = signedPreKeyID
        self.oneTimePreKeyID = oneTimePreKeyID
        self.kemPreKeyID = kemPreKeyID
        self.ciphertext = ciphertext
    }

    /// Parses P (without the type byte); `count` is how many bytes it occupies. `invalidMessage`
    /// for a short input or a flag bit outside 0–1.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(ReferenceError) -> (prefix: ReferencePrefix, count: Int) {
        let base = bytes.startIndex
        guard bytes.count >= 69 else { throw .invalidMessage }
        let flags = bytes[base + 68]
        guard flags & ~0x03 == 0 else { throw .invalidMessage }
        let count = 69 + (flags & 0x01 != 0 ? 4 : 0) + (flags & 0x02 != 0 ? 4 + ReferenceConstants.kemCiphertextCount : 0)
        guard bytes.count >= count else { throw .invalidMessage }
        let p = Array(bytes[base..<(base + count)])
        var offset = 69
        var oneTimePreKeyID: UInt32?
        if flags & 0x01 != 0 {
            oneTimePreKeyID = p.u32(at: offset)
            offset += 4
        }
        var kemPreKeyID: UInt32?
        var ciphertext: [UInt8]?
        if flags & 0x02 != 0 {
            kemPreKeyID = p.u32(at: offset)
            ciphertext = Array(p[(offset + 4)..<(offset + 4 + ReferenceConstants.kemCiphertextCount)])
        }
        var prefix = ReferencePrefix(
            identityKey: Array(p[0..<32]), baseKey: Array(p[32..<64]), signedPreKeyID: p.u32(at: 64),
            oneTimePreKeyID: oneTimePreKeyID, kemPreKeyID: kemPreKeyID, ciphertext: ciphertext)
        prefix.bytes = p
        return (prefix, count)
    }
}

/// X3DH's result: SK, AD and the prefix P it was bound to.
struct ReferenceX3DHResult: Equatable {
    var sharedSecret: [UInt8]
    var associatedData: [UInt8]
    var prefix: ReferencePrefix
}

/// SPEC §3 X3DH with the optional KEM prekey, composed naively from a backend's primitives
/// (ML-KEM-768 from swift-crypto's `MLKEM768`, called directly).
enum ReferenceX3DH<B: ReferenceBackend> {
    /// Encapsulation to a bundle's `ek` (bytes): `invalidKey` when the key fails FIPS 203's
    /// input check. The benchmarks encapsulate with fresh randomness; the vector tests return
    /// the vector's fixed encapsulation after the same check.
    typealias Encapsulator = ([UInt8]) throws(ReferenceError) -> (ciphertext: [UInt8], sharedSecret: [UInt8])

    /// `"SessionKit SPK v2" || 0x05 || SPK || u8(kem)`.
    static func signedPreKeyMessage(_ publicKey: [UInt8], kem: Bool) -> [UInt8] {
        ReferenceConstants.signedPreKeyLabel + [ReferenceConstants.signalKeyType] + publicKey + [kem ? 1 : 0]
    }

    /// `"SessionKit KEM v2" || 0x0B || ek`.
    static func kemPreKeyMessage(_ encapsulationKey: [UInt8]) -> [UInt8] {
        ReferenceConstants.kemPreKeyLabel + [ReferenceConstants.kemKeyType] + encapsulationKey
    }

    /// The bundle's checks in SPEC §3's order: spk_sig with `kem` = whether a KEM prekey is
    /// present, kem_sig (`invalidSignature`), then SPK_B and OPK_B canonical (`invalidKey`).
    /// (PQPK_B's input check is the encapsulation's parse, which comes next.)
    static func checkBundle(_ bundle: ReferenceBundle) throws(ReferenceError) {
        let verifier = try B.verifyingKey(bundle.identityKey)
        let signed = signedPreKeyMessage(bundle.signedPreKey, kem: bundle.kemPreKey != nil)
        let validSPK = bundle.signature.withUnsafeBytes { s in signed.withUnsafeBytes { B.verify(s, of: $0, with: verifier) } }
        guard validSPK else { throw .invalidSignature }
        if let kemKey = bundle.kemPreKey {
            let kemSigned = kemPreKeyMessage(kemKey)
            let validKEM = (bundle.kemSignature ?? []).withUnsafeBytes { s in
                kemSigned.withUnsafeBytes { B.verify(s, of: $0, with: verifier) }
            }
            guard validKEM else { throw .invalidSignature }
        }
        let canonical = bundle.signedPreKey.withUnsafeBytes(isCanonicalX25519)
            && (bundle.oneTimePreKey?.withUnsafeBytes(isCanonicalX25519) ?? true)
        guard canonical else { throw .invalidKey }
    }

    /// Alice's side: check the bundle, encapsulate when it has a KEM prekey, then the three or
    /// four DHs, SHA-256(P) and HKDF.
    static func initiate(
        identity: ReferenceIdentity<B>, localAddress: ReferenceAddress, remoteAddress: ReferenceAddress,
        ephemeral: (key: B.AgreementKey, publicKey: [UInt8]), bundle: ReferenceBundle, encapsulate: Encapsulator
    ) throws -> ReferenceX3DHResult {
        try checkBundle(bundle)
        var encapsulation: (ciphertext: [UInt8], sharedSecret: [UInt8])?
        if let kemKey = bundle.kemPreKey { encapsulation = try encapsulate(kemKey) }
        let prefix = ReferencePrefix(
            identityKey: identity.publicKey, baseKey: ephemeral.publicKey, signedPreKeyID: bundle.signedPreKeyID,
            oneTimePreKeyID: bundle.oneTimePreKey == nil ? nil : bundle.oneTimePreKeyID,
            kemPreKeyID: encapsulation == nil ? nil : bundle.kemPreKeyID, ciphertext: encapsulation?.ciphertext)
        var peer = [UInt8](repeating: 0, count: 32)
        try bundle.identityKey.withUnsafeBytes { ik in
            try peer.withUnsafeMutableBytes { try B.ed25519PublicKeyToX25519(ik, into: $0) }
        }
        let dhCount = bundle.oneTimePreKey == nil ? 3 : 4
        var ikm = [UInt8](repeating: 0xff, count: 32 * (dhCount + 1) + (encapsulation == nil ? 0 : 32))
        try ikm.withUnsafeMutableBytes { k in
            try bundle.signedPreKey.withUnsafeBytes { spk in
                try identity.agreement(with: spk, into: slice(k, 32))
                try peer.withUnsafeBytes { try B.x25519(ephemeral.key, publicKey: $0, into: slice(k, 64)) }
                try B.x25519(ephemeral.key, publicKey: spk, into: slice(k, 96))
            }
            if let opk = bundle.oneTimePreKey {
                try opk.withUnsafeBytes { try B.x25519(ephemeral.key, publicKey: $0, into: slice(k, 128)) }
            }
            if let encapsulation { slice(k, 32 * (dhCount + 1)).copyBytes(from: encapsulation.sharedSecret) }
        }
        return ReferenceX3DHResult(
            sharedSecret: deriveSharedSecret(ikm, prefix: prefix.bytes, kem: encapsulation != nil),
            associatedData: identity.publicKey + bundle.identityKey + localAddress.encoded + remoteAddress.encoded,
            prefix: prefix)
    }

    /// Bob's side, from the received prefix P (IK_A, EK_A and, with a KEM part, CT, which he
    /// decapsulates with his KEM seed).
    static func respond(
        identity: ReferenceIdentity<B>, localAddress: ReferenceAddress, remoteAddress: ReferenceAddress,
        signedPreKey: B.AgreementKey, oneTimePreKey: B.AgreementKey?, kemSeed: [UInt8]?, prefix: ReferencePrefix,
        decapsulate: ([UInt8], [UInt8]) throws(ReferenceError) -> [UInt8]
    ) throws -> ReferenceX3DHResult {
        guard prefix.baseKey.withUnsafeBytes(isCanonicalX25519) else { throw ReferenceError.invalidKey }
        guard (prefix.ciphertext == nil) == (kemSeed == nil) else { throw ReferenceError.invalidMessage }
        var sharedSecret: [UInt8]?
        if let ciphertext = prefix.ciphertext, let kemSeed { sharedSecret = try decapsulate(ciphertext, kemSeed) }
        var peer = [UInt8](repeating: 0, count: 32)
        try prefix.identityKey.withUnsafeBytes { ik in
            try peer.withUnsafeMutableBytes { try B.ed25519PublicKeyToX25519(ik, into: $0) }
        }
        let dhCount = oneTimePreKey == nil ? 3 : 4
        var ikm = [UInt8](repeating: 0xff, count: 32 * (dhCount + 1) + (sharedSecret == nil ? 0 : 32))
        try ikm.withUnsafeMutableBytes { k in
            try prefix.baseKey.withUnsafeBytes { ek in
                try peer.withUnsafeBytes { try B.x25519(signedPreKey, publicKey: $0, into: slice(k, 32)) }
                try identity.agreement(with: ek, into: slice(k, 64))
                try B.x25519(signedPreKey, publicKey: ek, into: slice(k, 96))
                if let oneTimePreKey { try B.x25519(oneTimePreKey, publicKey: ek, into: slice(k, 128)) }
            }
            if let sharedSecret { slice(k, 32 * (dhCount + 1)).copyBytes(from: sharedSecret) }
        }
        return ReferenceX3DHResult(
            sharedSecret: deriveSharedSecret(ikm, prefix: prefix.bytes, kem: sharedSecret != nil),
            associatedData: prefix.identityKey + identity.publicKey + remoteAddress.encoded + localAddress.encoded,
            prefix: prefix)
    }

    /// SK = HKDF(ZERO32, ikm, label || SHA-256(P), 32), label "SessionKit PQXDH v2" with a KEM
    /// part and "SessionKit X3DH v2" without.
    static func deriveSharedSecret(_ ikm: [UInt8], prefix: [UInt8], kem: Bool) -> [UInt8] {
        var info = kem ? ReferenceConstants.pqxdhInfo : ReferenceConstants.x3dhInfo
        let labelCount = info.count
        info += ReferenceConstants.zero32
        info.withUnsafeMutableBytes { i in
            prefix.withUnsafeBytes { p in B.sha256(p, into: slice(i, labelCount)) }
        }
        var sharedSecret = [UInt8](repeating: 0, count: 32)
        sharedSecret.withUnsafeMutableBytes { out in
            ReferenceConstants.zero32.withUnsafeBytes { salt in
                ikm.withUnsafeBytes { k in
                    info.withUnsafeBytes { info in
                        B.hkdfSHA256(salt: salt, inputKeyMaterial: k, info: info, into: out)
                    }
                }
            }
        }
        return sharedSecret
    }
}

/// `count` bytes of `buffer` from `offset` (32 by default).
@inline(__always)
func slice(_ buffer: UnsafeMutableRawBufferPointer, _ offset: Int, _ count: Int = 32) -> UnsafeMutableRawBufferPointer {
    UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
}
