import SignalPrimitives

/// The keys a responder publishes so that others can start sessions with it (SPEC §3): IK_B,
/// SPK_B with its id and signature, optionally a one-time prekey, optionally a KEM prekey, and
/// optionally the responder's registration id (SPEC §9).
///
/// A bundle holds public data only and is taken as received: decoding checks the layout, and
/// `X3DH` checks the rest when a session starts from it (the signatures, then the keys). Its
/// wire form, what a server stores and hands out:
///
///     bundle = 0x26 || IK_B (32) || u32(spk_id) || SPK_B (32) || spk_sig (64) || flags (1)
///              || [u32(opk_id) || OPK_B (32)]                      (flags bit 0)
///              || [u32(kem_id) || PQPK_B (1184) || kem_sig (64)]   (flags bit 1)
///              || [u32(registration_id)]                           (flags bit 2)
///
/// The registration id is not signed (SPEC §9: routing data, which a server could change
/// without gaining anything it could not do by dropping messages).
public struct PreKeyBundle: Sendable, Hashable {
    /// A published one-time prekey.
    public struct OneTimeKey: Sendable, Hashable {
        /// Its id.
        public let id: UInt32
        /// Its X25519 public key (OPK_B).
        public let publicKey: X25519.PublicKey

        /// Creates a published one-time prekey.
        public init(id: UInt32, publicKey: X25519.PublicKey) {
            self.id = id
            self.publicKey = publicKey
        }
    }

    /// A published KEM prekey (one-time or last resort; the bundle does not say which).
    public struct KEMKey: Sendable, Hashable {
        /// Its id.
        public let id: UInt32
        /// Its ML-KEM-768 encapsulation key, as published: 1184 bytes whose FIPS 203 validity
        /// is checked only after the signatures (`X3DH.checkBundle`).
        public let publicKey: [UInt8]
        /// `Ed25519.sign(IK_B, "SessionKit KEM v2" || 0x0B || PQPK_B)` (64 bytes).
        public let signature: [UInt8]

        /// Creates a published KEM prekey.
        /// - Throws: `SessionError.invalidKey` unless `publicKey` is 1184 bytes,
        ///   `SessionError.invalidSignature` unless `signature` is 64 bytes.
        public init(id: UInt32, publicKey: [UInt8], signature: [UInt8]) throws(SessionError) {
            guard publicKey.count == KEMEncapsulationKey.byteCount else { throw .invalidKey }
            guard signature.count == Ed25519.signatureByteCount else { throw .invalidSignature }
            self.id = id
            self.publicKey = publicKey
            self.signature = signature
        }

        /// Wraps parts whose lengths the caller has checked.
        init(uncheckedID id: UInt32, publicKey: [UInt8], signature: [UInt8]) {
            self.id = id
            self.publicKey = publicKey
            self.signature = signature
        }

        /// The public parts of one of our own KEM prekeys.
        @_spi(Testing) public init(_ key: KEMPreKey) {
            id = key.id
            publicKey = key.publicKey.rawRepresentation
            signature = key.signature
        }
    }

    /// Bytes before the optional parts: type, IK, spk_id, SPK, spk_sig, flags.
    @_spi(Testing) public static let baseByteCount = 1 + 32 + 4 + 32 + 64 + 1
    /// Bytes of the one-time prekey part.
    @_spi(Testing) public static let oneTimeKeyByteCount = 4 + 32
    /// Bytes of the KEM prekey part.
    @_spi(Testing) public static let kemKeyByteCount = 4 + KEMEncapsulationKey.byteCount + 64
    /// Bytes of the registration id part.
    @_spi(Testing) public static let registrationIDByteCount = 4

    /// The responder's Ed25519 identity key (IK_B).
    public let identityKey: Ed25519.PublicKey
    /// The signed prekey's id.
    public let signedPreKeyID: UInt32
    /// The signed prekey (SPK_B).
    public let signedPreKey: X25519.PublicKey
    /// `Ed25519.sign(IK_B, "SessionKit SPK v2" || Encode(SPK_B) || u8(kem))` (64 bytes), with
    /// `kem` = 1 exactly when the bundle carries a KEM prekey.
    public let signedPreKeySignature: [UInt8]
    /// The one-time prekey, if the server had one left.
    public let oneTimePreKey: OneTimeKey?
    /// The KEM prekey, if the responder publishes them.
    public let kemPreKey: KEMKey?
    /// The responder's registration id (SPEC §9), if its bundle carries one (flags bit 2).
    /// A session started from the bundle records it (`SessionManager.registrationID(of:)`).
    public let registrationID: RegistrationID?

    /// Creates a bundle from its published parts.
    /// - Throws: `SessionError.invalidSignature` unless the signature is 64 bytes.
    public init(
        identityKey: Ed25519.PublicKey, signedPreKeyID: UInt32, signedPreKey: X25519.PublicKey,
        signedPreKeySignature: [UInt8], oneTimePreKey: OneTimeKey?, kemPreKey: KEMKey? = nil,
        registrationID: RegistrationID? = nil
    ) throws(SessionError) {
        guard signedPreKeySignature.count == Ed25519.signatureByteCount else { throw .invalidSignature }
        self.identityKey = identityKey
        self.signedPreKeyID = signedPreKeyID
        self.signedPreKey = signedPreKey
        self.signedPreKeySignature = signedPreKeySignature
        self.oneTimePreKey = oneTimePreKey
        self.kemPreKey = kemPreKey
        self.registrationID = registrationID
    }

    /// The bundle that publishes the public parts of a responder's own prekeys.
    @_spi(Testing) public init(
        identityKey: Ed25519.PublicKey, signedPreKey: SignedPreKey, oneTimePreKey: OneTimePreKey?, kemPreKey: KEMPreKey? = nil,
        registrationID: RegistrationID? = nil
    ) {
        self.identityKey = identityKey
        signedPreKeyID = signedPreKey.id
        self.signedPreKey = signedPreKey.publicKey
        signedPreKeySignature = signedPreKey.signature
        self.oneTimePreKey = oneTimePreKey.map { OneTimeKey(id: $0.id, publicKey: $0.publicKey) }
        self.kemPreKey = kemPreKey.map(KEMKey.init)
        self.registrationID = registrationID
    }

    /// The `kem` bit the signed prekey's signature must carry: whether a KEM prekey is present.
    public var signsKEMPreKeys: Bool { kemPreKey != nil }

    // MARK: Encoding

    /// The wire form (see the type's documentation).
    public var serialized: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.baseByteCount + Self.oneTimeKeyByteCount + Self.kemKeyByteCount + Self.registrationIDByteCount)
        out.append(WireType.preKeyBundle)
        out.append(contentsOf: identityKey.rawRepresentation)
        out.appendBigEndian(signedPreKeyID)
        out.append(contentsOf: signedPreKey.rawRepresentation)
        out.append(contentsOf: signedPreKeySignature)
        out.append((oneTimePreKey == nil ? 0 : 0x01) | (kemPreKey == nil ? 0 : 0x02) | (registrationID == nil ? 0 : 0x04))
        if let oneTimePreKey {
            out.appendBigEndian(oneTimePreKey.id)
            out.append(contentsOf: oneTimePreKey.publicKey.rawRepresentation)
        }
        if let kemPreKey {
            out.appendBigEndian(kemPreKey.id)
            out.append(contentsOf: kemPreKey.publicKey)
            out.append(contentsOf: kemPreKey.signature)
        }
        if let registrationID { out.appendBigEndian(registrationID.rawValue) }
        return out
    }

    /// Decodes a bundle, checking its layout only (SPEC §3, §9): keys and signatures are checked
    /// by `X3DH.checkBundle` when a session starts from it.
    /// - Throws: `SessionError.invalidPayload` for an empty input, a wrong length, a flag bit
    ///   other than bits 0–2 or a registration id of 0 or above 2^31 − 1;
    ///   `SessionError.unsupportedVersion` for a first byte other than 0x26.
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        guard let type = bytes.first else { throw .invalidPayload }
        guard type == WireType.preKeyBundle else { throw .unsupportedVersion }
        guard bytes.count >= Self.baseByteCount else { throw .invalidPayload }
        let flags = bytes[Self.baseByteCount - 1]
        guard flags & ~0x07 == 0 else { throw .invalidPayload }
        let hasOneTimeKey = flags & 0x01 != 0, hasKEMKey = flags & 0x02 != 0, hasRegistrationID = flags & 0x04 != 0
        let expected = Self.baseByteCount + (hasOneTimeKey ? Self.oneTimeKeyByteCount : 0) + (hasKEMKey ? Self.kemKeyByteCount : 0)
            + (hasRegistrationID ? Self.registrationIDByteCount : 0)
        guard bytes.count == expected else { throw .invalidPayload }
        if hasRegistrationID {
            guard let id = RegistrationID(rawValue: bytes.readBigEndianUInt32(at: expected - Self.registrationIDByteCount)) else {
                throw .invalidPayload
            }
            registrationID = id
        } else {
            registrationID = nil
        }
        do throws(CryptoError) {
            identityKey = try Ed25519.PublicKey(rawRepresentation: Array(bytes[1 ..< 33]))
            signedPreKeyID = bytes.readBigEndianUInt32(at: 33)
            signedPreKey = try X25519.PublicKey(rawRepresentation: Array(bytes[37 ..< 69]))
            signedPreKeySignature = Array(bytes[69 ..< 133])
            var offset = Self.baseByteCount
            if hasOneTimeKey {
                oneTimePreKey = OneTimeKey(
                    id: bytes.readBigEndianUInt32(at: offset),
                    publicKey: try X25519.PublicKey(rawRepresentation: Array(bytes[offset + 4 ..< offset + 36])))
                offset += Self.oneTimeKeyByteCount
            } else {
                oneTimePreKey = nil
            }
            if hasKEMKey {
                let keyEnd = offset + 4 + KEMEncapsulationKey.byteCount
                kemPreKey = KEMKey(
                    uncheckedID: bytes.readBigEndianUInt32(at: offset), publicKey: Array(bytes[offset + 4 ..< keyEnd]),
                    signature: Array(bytes[keyEnd ..< keyEnd + 64]))
            } else {
                kemPreKey = nil
            }
        } catch {
            // Every key above is exactly 32 bytes by the layout.
            throw .invalidPayload
        }
    }
}
