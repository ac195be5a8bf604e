import SignalPrimitives

/// The public prekey material a device uploads to its server, which hands it out as
/// `PreKeyBundle`s: each one-time prekey and each one-time KEM prekey at most once, and the
/// last-resort KEM prekey when no one-time KEM prekey is left.
///
/// Produced by `LocalPreKeys.maintain(…)` (what changed: a rotated signed prekey with its
/// last-resort KEM prekey, newly generated one-time prekeys) and by
/// `LocalPreKeys.fullUpload(identityKey:)` (everything held, for a first registration).
/// Holds no secret. Its wire form (`serialized`), for apps that send it to their server as
/// bytes (this layout is the library's, not SPEC's; integers big-endian):
///
///     upload = "SKPU" || u8(version = 1) || IK (32) || flags (1)
///              || [u32(spk_id) || SPK (32) || u8(kem) || spk_sig (64)]      (flags bit 0)
///              || [u32(kem_id) || PQPK (1184) || kem_sig (64)]              (flags bit 1: last resort)
///              || [u32(registration_id)]                                    (flags bit 2)
///              || u32(n) || n × (u32(opk_id) || OPK (32))
///              || u32(m) || m × (u32(kem_id) || PQPK (1184) || kem_sig (64))
///
/// The last-resort KEM prekey is present exactly when the signed prekey is, signed with
/// `kem` = 1. The registration id (SPEC §9) is the installation's: `SessionManager` puts it in
/// every upload, and a server hands it out in every bundle (flags bit 2 of the bundle).
public struct PreKeyUpload: Sendable, Hashable, CustomStringConvertible {
    /// The public parts of a signed prekey.
    public struct SignedKey: Sendable, Hashable {
        /// Its id.
        public let id: UInt32
        /// Its X25519 public key (SPK).
        public let publicKey: X25519.PublicKey
        /// `Ed25519.sign(IK, "SessionKit SPK v2" || Encode(SPK) || u8(kem))` (64 bytes).
        public let signature: [UInt8]
        /// The signed `kem` bit: whether every bundle of this key carries a KEM prekey.
        public let signsKEMPreKeys: Bool

        /// The public parts of `key`.
        @_spi(Testing) public init(_ key: SignedPreKey) {
            id = key.id
            publicKey = key.publicKey
            signature = key.signature
            signsKEMPreKeys = key.signsKEMPreKeys
        }

        init(id: UInt32, publicKey: X25519.PublicKey, signature: [UInt8], signsKEMPreKeys: Bool) {
            self.id = id
            self.publicKey = publicKey
            self.signature = signature
            self.signsKEMPreKeys = signsKEMPreKeys
        }
    }

    /// The magic of the wire form.
    static let magic: [UInt8] = Array("SKPU".utf8)
    /// The wire form's version.
    @_spi(Testing) public static let formatVersion: UInt8 = 1

    /// The device's identity key (IK).
    public let identityKey: Ed25519.PublicKey
    /// The signed prekey to publish, or `nil` when the published one is unchanged.
    public let signedPreKey: SignedKey?
    /// The last-resort KEM prekey that goes with `signedPreKey` (when it is signed with `kem` = 1).
    public let lastResortKEMPreKey: PreKeyBundle.KEMKey?
    /// One-time prekeys to add to the published ones.
    public let oneTimePreKeys: [PreKeyBundle.OneTimeKey]
    /// One-time KEM prekeys to add to the published ones.
    public let oneTimeKEMPreKeys: [PreKeyBundle.KEMKey]
    /// The installation's registration id (SPEC §9), which the server puts in every bundle it
    /// builds from this upload; `nil` in an upload that carries none.
    public let registrationID: RegistrationID?

    /// Creates an upload from its parts.
    public init(
        identityKey: Ed25519.PublicKey, signedPreKey: SignedKey?, lastResortKEMPreKey: PreKeyBundle.KEMKey? = nil,
        oneTimePreKeys: [PreKeyBundle.OneTimeKey], oneTimeKEMPreKeys: [PreKeyBundle.KEMKey] = [],
        registrationID: RegistrationID? = nil
    ) {
        self.identityKey = identityKey
        self.signedPreKey = signedPreKey
        self.lastResortKEMPreKey = lastResortKEMPreKey
        self.oneTimePreKeys = oneTimePreKeys
        self.oneTimeKEMPreKeys = oneTimeKEMPreKeys
        self.registrationID = registrationID
    }

    /// This upload with the registration id `registrationID`.
    func with(registrationID: RegistrationID?) -> PreKeyUpload {
        PreKeyUpload(
            identityKey: identityKey, signedPreKey: signedPreKey, lastResortKEMPreKey: lastResortKEMPreKey,
            oneTimePreKeys: oneTimePreKeys, oneTimeKEMPreKeys: oneTimeKEMPreKeys, registrationID: registrationID)
    }

    /// The bundle a server builds from this upload: the identity key, the signed prekey,
    /// `oneTimePreKey` (for example one of `oneTimePreKeys`, or `nil` when none is left) and,
    /// for a signed prekey signed with `kem` = 1, `kemPreKey` (one of `oneTimeKEMPreKeys`) or
    /// the last-resort KEM prekey when it is `nil`, and the upload's registration id. Returns
    /// `nil` when the upload carries no signed prekey, or when a KEM prekey is given for a
    /// signed prekey signed with `kem` = 0.
    public func bundle(oneTimePreKey: PreKeyBundle.OneTimeKey?, kemPreKey: PreKeyBundle.KEMKey? = nil) -> PreKeyBundle? {
        guard let signedPreKey else { return nil }
        let kem: PreKeyBundle.KEMKey?
        if signedPreKey.signsKEMPreKeys {
            guard let chosen = kemPreKey ?? lastResortKEMPreKey else { return nil }
            kem = chosen
        } else {
            guard kemPreKey == nil else { return nil }
            kem = nil
        }
        return try? PreKeyBundle(
            identityKey: identityKey, signedPreKeyID: signedPreKey.id, signedPreKey: signedPreKey.publicKey,
            signedPreKeySignature: signedPreKey.signature, oneTimePreKey: oneTimePreKey, kemPreKey: kem,
            registrationID: registrationID)
    }

    /// Whether there is nothing to upload (the registration id alone is nothing new: every
    /// upload carries it).
    public var isEmpty: Bool { signedPreKey == nil && oneTimePreKeys.isEmpty && oneTimeKEMPreKeys.isEmpty }

    // MARK: Encoding

    /// The wire form (see the type's documentation).
    public var serialized: [UInt8] {
        var out = Self.magic + [Self.formatVersion]
        out.append(contentsOf: identityKey.rawRepresentation)
        out.append((signedPreKey == nil ? 0 : 0x01) | (lastResortKEMPreKey == nil ? 0 : 0x02) | (registrationID == nil ? 0 : 0x04))
        if let signedPreKey {
            out.appendBigEndian(signedPreKey.id)
            out.append(contentsOf: signedPreKey.publicKey.rawRepresentation)
            out.append(signedPreKey.signsKEMPreKeys ? 1 : 0)
            out.append(contentsOf: signedPreKey.signature)
        }
        if let lastResortKEMPreKey { Self.append(lastResortKEMPreKey, to: &out) }
        if let registrationID { out.appendBigEndian(registrationID.rawValue) }
        out.appendBigEndian(UInt32(truncatingIfNeeded: oneTimePreKeys.count))
        for key in oneTimePreKeys {
            out.appendBigEndian(key.id)
            out.append(contentsOf: key.publicKey.rawRepresentation)
        }
        out.appendBigEndian(UInt32(truncatingIfNeeded: oneTimeKEMPreKeys.count))
        for key in oneTimeKEMPreKeys { Self.append(key, to: &out) }
        return out
    }

    /// Decodes the wire form strictly. Keys and signatures are not verified here (the
    /// initiator verifies every bundle built from it).
    /// - Throws: `SessionError.invalidPayload` for a wrong magic, a flag bit other than 0–2, a
    ///   registration id of 0 or above 2^31 − 1, a last-resort KEM prekey that does not match the signed prekey's `kem` bit, a
    ///   `kem` byte other than 0 or 1, a count above `LocalPreKeys.maximumOneTimePreKeyCount`,
    ///   a truncated field or trailing bytes; `SessionError.unsupportedVersion` for another
    ///   version.
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        var reader = ByteReader(bytes)
        guard try reader.take(4).elementsEqual(Self.magic) else { throw .invalidPayload }
        guard try reader.byte() == Self.formatVersion else { throw .unsupportedVersion }
        do { identityKey = try Ed25519.PublicKey(rawRepresentation: try reader.array(32)) } catch { throw .invalidPayload }
        let flags = try reader.byte()
        guard flags & ~0x07 == 0 else { throw .invalidPayload }
        if flags & 0x01 != 0 {
            let id = try reader.u32()
            let key = try reader.x25519Key()
            let kemByte = try reader.byte()
            guard kemByte <= 1 else { throw .invalidPayload }
            signedPreKey = SignedKey(id: id, publicKey: key, signature: try reader.array(64), signsKEMPreKeys: kemByte == 1)
        } else {
            signedPreKey = nil
        }
        lastResortKEMPreKey = flags & 0x02 != 0 ? try Self.readKEMKey(&reader) : nil
        guard (signedPreKey?.signsKEMPreKeys ?? false) == (lastResortKEMPreKey != nil) else { throw .invalidPayload }
        if flags & 0x04 != 0 {
            guard let id = RegistrationID(rawValue: try reader.u32()) else { throw .invalidPayload }
            registrationID = id
        } else {
            registrationID = nil
        }
        var oneTime: [PreKeyBundle.OneTimeKey] = []
        for _ in 0 ..< (try Self.count(&reader)) {
            oneTime.append(PreKeyBundle.OneTimeKey(id: try reader.u32(), publicKey: try reader.x25519Key()))
        }
        var oneTimeKEM: [PreKeyBundle.KEMKey] = []
        for _ in 0 ..< (try Self.count(&reader)) { oneTimeKEM.append(try Self.readKEMKey(&reader)) }
        guard reader.isAtEnd else { throw .invalidPayload }
        oneTimePreKeys = oneTime
        oneTimeKEMPreKeys = oneTimeKEM
    }

    private static func append(_ key: PreKeyBundle.KEMKey, to out: inout [UInt8]) {
        out.appendBigEndian(key.id)
        out.append(contentsOf: key.publicKey)
        out.append(contentsOf: key.signature)
    }

    private static func readKEMKey(_ reader: inout ByteReader) throws(SessionError) -> PreKeyBundle.KEMKey {
        PreKeyBundle.KEMKey(
            uncheckedID: try reader.u32(), publicKey: try reader.array(KEMEncapsulationKey.byteCount),
            signature: try reader.array(64))
    }

    private static func count(_ reader: inout ByteReader) throws(SessionError) -> Int {
        let count = try reader.u32()
        guard count <= UInt32(LocalPreKeys.maximumOneTimePreKeyCount) else { throw .invalidPayload }
        return Int(count)
    }

    /// The signed prekey id and the numbers of keys.
    public var description: String {
        "PreKeyUpload(signedPreKey: \(signedPreKey.map { String($0.id) } ?? "unchanged"), "
            + "lastResortKEM: \(lastResortKEMPreKey.map { String($0.id) } ?? "none"), oneTimePreKeys: \(oneTimePreKeys.count), "
            + "oneTimeKEMPreKeys: \(oneTimeKEMPreKeys.count), registrationID: \(registrationID.map(\.description) ?? "none"))"
    }
}

/// A strict forward reader over a byte array: every read past the end is `invalidPayload`.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte was read.
    var isAtEnd: Bool { offset == bytes.count }

    mutating func take(_ count: Int) throws(SessionError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - offset >= count else { throw .invalidPayload }
        defer { offset += count }
        return bytes[offset ..< offset + count]
    }

    mutating func byte() throws(SessionError) -> UInt8 { try take(1).first ?? 0 }

    mutating func array(_ count: Int) throws(SessionError) -> [UInt8] { Array(try take(count)) }

    mutating func u32() throws(SessionError) -> UInt32 {
        let slice = try take(4)
        return slice.readBigEndianUInt32(at: slice.startIndex)
    }

    /// 32 bytes as an X25519 public key (its canonicity is not checked here).
    mutating func x25519Key() throws(SessionError) -> X25519.PublicKey {
        do { return try X25519.PublicKey(rawRepresentation: try array(32)) } catch { throw .invalidPayload }
    }
}
