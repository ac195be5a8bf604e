import SignalPrimitives

/// The result of X3DH (SPEC §3): the shared secret SK that seeds the Double Ratchet and the
/// associated data `AD = IK_A || IK_B || Encode(A) || Encode(B)` that every message of the
/// session authenticates.
@_spi(Testing) public struct X3DHAgreement: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// SK = HKDF(ZERO32, FF32 || DH1 || DH2 || DH3 [|| DH4] [|| SS], label || SHA-256(P), 32).
    public let sharedSecret: SymmetricKey
    /// AD = IK_A || IK_B || Encode(A) || Encode(B), initiator first.
    public let associatedData: [UInt8]

    /// A redacted description: the associated data only.
    public var description: String { "X3DHAgreement(AD: \(Hex.encode(associatedData)), secret redacted)" }
    /// A redacted description: the associated data only.
    public var debugDescription: String { description }
}

/// X3DH with an optional KEM prekey (SPEC §3), for both parties.
@_spi(Testing) public enum X3DH {
    /// Length of SK.
    public static let sharedSecretByteCount = 32

    /// The bundle's checks, in SPEC §3's order: spk_sig with `kem` = whether a KEM prekey is
    /// present, then kem_sig (`invalidSignature`); then that SPK_B and OPK_B are canonical and
    /// PQPK_B is a valid encapsulation key (`invalidKey`). IK_B's point validity is checked
    /// later, when X3DH converts it. Returns the checked KEM prekey's key, if any.
    /// - Throws: `SessionError.invalidSignature` or `.invalidKey` as above.
    public static func checkBundle(_ bundle: PreKeyBundle) throws(SessionError) -> KEMEncapsulationKey? {
        let signed = SignedPreKey.signedBytes(publicKey: bundle.signedPreKey, signsKEMPreKeys: bundle.signsKEMPreKeys)
        guard bundle.identityKey.isValidSignature(bundle.signedPreKeySignature, for: signed) else { throw .invalidSignature }
        if let kem = bundle.kemPreKey {
            guard bundle.identityKey.isValidSignature(kem.signature, for: KEMPreKey.signedBytes(publicKey: kem.publicKey)) else {
                throw .invalidSignature
            }
        }
        guard bundle.signedPreKey.isCanonical, bundle.oneTimePreKey?.publicKey.isCanonical ?? true else { throw .invalidKey }
        return try bundle.kemPreKey.map { (kem) throws(SessionError) in try KEMEncapsulationKey(rawRepresentation: kem.publicKey) }
    }

    /// AD = IK_A || IK_B || Encode(A) || Encode(B).
    public static func associatedData(
        initiatorIdentity: Ed25519.PublicKey, responderIdentity: Ed25519.PublicKey,
        initiator: ProtocolAddress, responder: ProtocolAddress
    ) -> [UInt8] {
        initiatorIdentity.rawRepresentation + responderIdentity.rawRepresentation + initiator.encoded + responder.encoded
    }

    /// The initiator's side (Alice at `localAddress`, starting a session with `remoteAddress`):
    /// agrees on SK for a bundle that passed `checkBundle`, the ephemeral key EK_A, and the
    /// prefix P she will send (built from the same keys and ids; it carries CT when the bundle
    /// has a KEM prekey, and `kemSharedSecret` is then SS).
    /// - Throws: `SessionError.invalidKey` for an IK_B that is not a valid point, an all-zero
    ///   DH or a missing KEM secret, `SessionError.primitive` when the point check cannot run.
    public static func initiate(
        identity: IdentityKeyPair, localAddress: ProtocolAddress, remoteAddress: ProtocolAddress,
        bundle: PreKeyBundle, ephemeralKey: X25519.PrivateKey, prefix: PreKeyMessage.Prefix,
        kemSharedSecret: SecureBytes?
    ) throws(SessionError) -> X3DHAgreement {
        let remoteIdentity: X25519.PublicKey
        do { remoteIdentity = try bundle.identityKey.convertToX25519() } catch { throw SessionError(error) }
        let localIdentity = identity.agreementKey
        let secret = try derive(
            dhCount: bundle.oneTimePreKey == nil ? 3 : 4, kemSharedSecret: kemSharedSecret, prefix: prefix
        ) { (slot: Int) throws(CryptoError) -> (X25519.PrivateKey, X25519.PublicKey) in
            switch slot {
            case 0: return (localIdentity, bundle.signedPreKey)        // DH1
            case 1: return (ephemeralKey, remoteIdentity)              // DH2
            case 2: return (ephemeralKey, bundle.signedPreKey)         // DH3
            default:                                                   // DH4
                guard let opk = bundle.oneTimePreKey else { throw .invalidKey }
                return (ephemeralKey, opk.publicKey)
            }
        }
        return X3DHAgreement(
            sharedSecret: secret,
            associatedData: associatedData(
                initiatorIdentity: identity.publicKey, responderIdentity: bundle.identityKey,
                initiator: localAddress, responder: remoteAddress))
    }

    /// The responder's side (Bob at `localAddress`, for a prekey message that came from
    /// `remoteAddress`): agrees on SK from its own prekeys, the received prefix P (IK_A, EK_A)
    /// and, with a KEM part, the decapsulated secret SS.
    /// - Throws: `SessionError.invalidKey` for a non-canonical EK_A, an IK_A that is not a
    ///   valid point, an all-zero DH or a missing KEM secret.
    public static func respond(
        identity: IdentityKeyPair, localAddress: ProtocolAddress, remoteAddress: ProtocolAddress,
        prefix: PreKeyMessage.Prefix, signedPreKey: SignedPreKey, oneTimePreKey: OneTimePreKey?,
        kemSharedSecret: SecureBytes?
    ) throws(SessionError) -> X3DHAgreement {
        let initiatorEphemeralKey = prefix.baseKey
        guard initiatorEphemeralKey.isCanonical else { throw .invalidKey }
        let remoteIdentity: X25519.PublicKey
        do { remoteIdentity = try prefix.identityKey.convertToX25519() } catch { throw SessionError(error) }
        let localIdentity = identity.agreementKey
        let secret = try derive(
            dhCount: oneTimePreKey == nil ? 3 : 4, kemSharedSecret: kemSharedSecret, prefix: prefix
        ) { (slot: Int) throws(CryptoError) -> (X25519.PrivateKey, X25519.PublicKey) in
            switch slot {
            case 0: return (signedPreKey.privateKey, remoteIdentity)          // DH1
            case 1: return (localIdentity, initiatorEphemeralKey)             // DH2
            case 2: return (signedPreKey.privateKey, initiatorEphemeralKey)   // DH3
            default:                                                          // DH4
                guard let opk = oneTimePreKey else { throw .invalidKey }
                return (opk.privateKey, initiatorEphemeralKey)
            }
        }
        return X3DHAgreement(
            sharedSecret: secret,
            associatedData: associatedData(
                initiatorIdentity: prefix.identityKey, responderIdentity: identity.publicKey,
                initiator: remoteAddress, responder: localAddress))
    }

    /// SK = HKDF(ZERO32, FF32 || DH_0 || … || DH_(count−1) [|| SS], label || SHA-256(P), 32),
    /// label "SessionKit PQXDH v2" with a KEM part and "SessionKit X3DH v2" without. The input
    /// key material is assembled in zeroing storage.
    private static func derive(
        dhCount: Int, kemSharedSecret: SecureBytes?, prefix: PreKeyMessage.Prefix,
        pair: (Int) throws(CryptoError) -> (X25519.PrivateKey, X25519.PublicKey)
    ) throws(SessionError) -> SymmetricKey {
        guard (prefix.kem == nil) == (kemSharedSecret == nil) else { throw .invalidKey }
        let width = X25519.keyByteCount
        let kemCount = kemSharedSecret?.count ?? 0
        let material: SecureBytes
        do {
            material = try SecureBytes(count: width * (dhCount + 1) + kemCount) { (ikm: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                ikm.slice(0 ..< width).initializeMemory(as: UInt8.self, repeating: 0xFF)
                for slot in 0 ..< dhCount {
                    let (privateKey, publicKey) = try pair(slot)
                    try privateKey.sharedSecret(with: publicKey, into: ikm.slice(width * (slot + 1) ..< width * (slot + 2)))
                }
                kemSharedSecret?.withUnsafeBytes { ikm.slice(width * (dhCount + 1) ..< ikm.count).copyMemory(from: $0) }
            }
        } catch {
            throw SessionError(error)
        }
        let info = (kemSharedSecret == nil ? ProtocolInfo.x3dh : ProtocolInfo.pqxdh) + prefix.digest
        do {
            let output = try SecureBytes(count: sharedSecretByteCount) { (out: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                try material.withUnsafeBytes { (ikm: UnsafeRawBufferPointer) throws(CryptoError) in
                    try info.withBytes { (info: UnsafeRawBufferPointer) throws(CryptoError) in
                        try ZeroSaltHKDF.extractor.deriveKey(inputKeyMaterial: ikm, info: info, into: out)
                    }
                }
            }
            return SymmetricKey(storage: output)
        } catch {
            throw SessionError.primitive(error)
        }
    }
}
