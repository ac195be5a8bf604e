import SignalPrimitives

/// The result of X3DH (SPEC §3): the shared secret SK that seeds the Double Ratchet and the
/// associated data `AD = IK_A || IK_B` that every message of the session authenticates.
public struct X3DHAgreement: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// SK = HKDF(ZERO32, FF32 || DH1 || DH2 || DH3 [|| DH4], "SessionKit X3DH v1", 32).
    public let sharedSecret: SymmetricKey
    /// AD = IK_A || IK_B: the two 32-byte Ed25519 public keys, initiator first.
    public let associatedData: [UInt8]

    /// A redacted description: the associated data only.
    public var description: String { "X3DHAgreement(AD: \(Hex.encode(associatedData)), secret redacted)" }
    /// A redacted description: the associated data only.
    public var debugDescription: String { description }
}

/// The X3DH key agreement of SPEC §3, for both parties.
public enum X3DH {
    /// Length of SK.
    public static let sharedSecretByteCount = 32

    /// The initiator's side (Alice): verifies the bundle and agrees on SK with ephemeral key EK_A.
    ///
    /// Checks, in order: the signed prekey's signature (before any conversion or DH), the
    /// canonicity of SPK_B and OPK_B, then IK_B's point validity for the ed→x conversion, then
    /// the DHs (an all-zero output is rejected).
    /// - Throws: `SessionError.invalidSignature` when the signature does not verify,
    ///   `SessionError.invalidKey` for a non-canonical prekey, an invalid IK_B point or a
    ///   small-order DH input.
    public static func initiate(
        identity: IdentityKeyPair, bundle: PreKeyBundle, ephemeralKey: X25519.PrivateKey
    ) throws(SessionError) -> X3DHAgreement {
        guard bundle.identityKey.isValidSignature(bundle.signedPreKeySignature, for: bundle.signedPreKey.signalEncoding) else {
            throw .invalidSignature
        }
        guard bundle.signedPreKey.isCanonical, bundle.oneTimePreKey?.publicKey.isCanonical ?? true else {
            throw .invalidKey
        }
        let remoteIdentity: X25519.PublicKey
        do { remoteIdentity = try bundle.identityKey.convertToX25519() } catch { throw .invalidKey }
        let localIdentity = identity.agreementKey
        let secret = try derive(dhCount: bundle.oneTimePreKey == nil ? 3 : 4) { (slot: Int) throws(CryptoError) -> (X25519.PrivateKey, X25519.PublicKey) in
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
            associatedData: identity.publicKey.rawRepresentation + bundle.identityKey.rawRepresentation)
    }

    /// The responder's side (Bob): agrees on SK from its own prekeys and the initiator's
    /// identity key IK_A and ephemeral key EK_A (both taken from a prekey message).
    /// - Throws: `SessionError.invalidKey` for a non-canonical EK_A, an IK_A that is not a
    ///   valid Ed25519 point, or a small-order DH input.
    public static func respond(
        identity: IdentityKeyPair, signedPreKey: SignedPreKey, oneTimePreKey: OneTimePreKey?,
        initiatorIdentityKey: Ed25519.PublicKey, initiatorEphemeralKey: X25519.PublicKey
    ) throws(SessionError) -> X3DHAgreement {
        guard initiatorEphemeralKey.isCanonical else { throw .invalidKey }
        let remoteIdentity: X25519.PublicKey
        do { remoteIdentity = try initiatorIdentityKey.convertToX25519() } catch { throw .invalidKey }
        let localIdentity = identity.agreementKey
        let secret = try derive(dhCount: oneTimePreKey == nil ? 3 : 4) { (slot: Int) throws(CryptoError) -> (X25519.PrivateKey, X25519.PublicKey) in
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
            associatedData: initiatorIdentityKey.rawRepresentation + identity.publicKey.rawRepresentation)
    }

    /// SK = HKDF(ZERO32, FF32 || DH_0 || … || DH_(count−1), info, 32), with the input key
    /// material assembled in zeroing storage.
    private static func derive(
        dhCount: Int, pair: (Int) throws(CryptoError) -> (X25519.PrivateKey, X25519.PublicKey)
    ) throws(SessionError) -> SymmetricKey {
        let width = X25519.keyByteCount
        let material: SecureBytes
        do {
            material = try SecureBytes(count: width * (dhCount + 1)) { (ikm: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                ikm.slice(0 ..< width).initializeMemory(as: UInt8.self, repeating: 0xFF)
                for slot in 0 ..< dhCount {
                    let (privateKey, publicKey) = try pair(slot)
                    try privateKey.sharedSecret(with: publicKey, into: ikm.slice(width * (slot + 1) ..< width * (slot + 2)))
                }
            }
        } catch {
            throw SessionError(error)
        }
        do {
            let output = try SecureBytes(count: sharedSecretByteCount) { (out: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                try material.withUnsafeBytes { (ikm: UnsafeRawBufferPointer) throws(CryptoError) in
                    try ProtocolInfo.x3dh.withBytes { (info: UnsafeRawBufferPointer) throws(CryptoError) in
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
