import SignalPrimitives

/// A prekey message (SPEC §4): what an initiator sends until it has decrypted a reply.
///
///     0x22 || IK_A (32) || EK_A (32) || u32(spk_id) || flags (1)
///          || [u32(opk_id)]                       (flags bit 0: a one-time prekey was used)
///          || [u32(kem_id) || CT (1088)]          (flags bit 1: a KEM prekey was used)
///          || [u32(registration_id)]              (flags bit 2: the initiator's, SPEC §9)
///          || message
///
/// The bytes between the type byte and `message` are the prefix P that X3DH hashes into its
/// key derivation (SPEC §3), so the registration id is bound into SK. Decoding checks, in
/// order: the type byte (`unsupportedVersion`), the lengths, the flags and the registration id
/// (`invalidMessage`: 70 prefix bytes, plus 4 with a one-time prekey, plus 1092 with a KEM
/// prekey, plus 4 with a registration id, which must be 1 … 2^31 − 1; then at least 41 + 16),
/// the inner type byte (`unsupportedVersion`), then the canonicity of EK_A and of the ratchet
/// key (`invalidKey`).
/// IK_A's validity as an Ed25519 point is X3DH's check, not the decoder's.
@_spi(Testing) public struct PreKeyMessage: Sendable, Hashable {
    /// The X3DH part of a prekey message: who the initiator is and which prekeys it used.
    public struct Prefix: Sendable, Hashable {
        /// The initiator's Ed25519 identity key (IK_A).
        public let identityKey: Ed25519.PublicKey
        /// The initiator's ephemeral X3DH key (EK_A), which identifies the session it creates.
        public let baseKey: X25519.PublicKey
        /// The id of the responder's signed prekey.
        public let signedPreKeyID: UInt32
        /// The id of the responder's one-time prekey, if one was used.
        public let oneTimePreKeyID: UInt32?
        /// The KEM part, if a KEM prekey was used: its id and the ciphertext CT (1088 bytes).
        public let kem: KEMPart?
        /// The initiator's registration id (SPEC §9), if it sent one (flags bit 2).
        public let registrationID: RegistrationID?

        /// The KEM part of a prefix.
        public struct KEMPart: Sendable, Hashable {
            /// The id of the responder's KEM prekey.
            public let preKeyID: UInt32
            /// The KEM ciphertext CT (1088 bytes).
            public let ciphertext: [UInt8]

            /// Creates a KEM part.
            /// - Throws: `SessionError.invalidMessage` unless the ciphertext is 1088 bytes.
            public init(preKeyID: UInt32, ciphertext: [UInt8]) throws(SessionError) {
                guard ciphertext.count == KEMEncapsulation.ciphertextByteCount else { throw .invalidMessage }
                self.preKeyID = preKeyID
                self.ciphertext = ciphertext
            }

            init(uncheckedPreKeyID id: UInt32, ciphertext: [UInt8]) {
                preKeyID = id
                self.ciphertext = ciphertext
            }
        }

        /// Creates a prefix.
        public init(
            identityKey: Ed25519.PublicKey, baseKey: X25519.PublicKey, signedPreKeyID: UInt32,
            oneTimePreKeyID: UInt32?, kem: KEMPart?, registrationID: RegistrationID? = nil
        ) {
            self.identityKey = identityKey
            self.baseKey = baseKey
            self.signedPreKeyID = signedPreKeyID
            self.oneTimePreKeyID = oneTimePreKeyID
            self.kem = kem
            self.registrationID = registrationID
        }

        /// The flags byte: bit 0 a one-time prekey, bit 1 a KEM prekey, bit 2 a registration id.
        public var flags: UInt8 {
            (oneTimePreKeyID == nil ? 0 : 0x01) | (kem == nil ? 0 : 0x02) | (registrationID == nil ? 0 : 0x04)
        }

        /// Bytes of P (the prefix without the type byte).
        public var byteCount: Int { PreKeyMessage.prefixByteCount(flags: flags) - 1 }

        /// P = `IK_A || EK_A || u32(spk_id) || flags || [u32(opk_id)] || [u32(kem_id) || CT]
        /// || [u32(registration_id)]`, the bytes X3DH hashes into SK (SPEC §3, §9).
        public var bytes: [UInt8] {
            var out = [UInt8]()
            out.reserveCapacity(byteCount)
            out.append(contentsOf: identityKey.rawRepresentation)
            out.append(contentsOf: baseKey.rawRepresentation)
            out.appendBigEndian(signedPreKeyID)
            out.append(flags)
            if let oneTimePreKeyID { out.appendBigEndian(oneTimePreKeyID) }
            if let kem {
                out.appendBigEndian(kem.preKeyID)
                out.append(contentsOf: kem.ciphertext)
            }
            if let registrationID { out.appendBigEndian(registrationID.rawValue) }
            return out
        }

        /// SHA-256(P).
        public var digest: [UInt8] { SHA256.hash(bytes) }

        /// Decodes P as `bytes` writes it (persistence): exactly one prefix, flags bits 0–2 only,
        /// a canonical EK_A, a registration id in range.
        /// - Throws: `SessionError.invalidPayload` for anything else.
        init(decoding p: [UInt8]) throws(SessionError) {
            guard p.count >= PreKeyMessage.minimumPrefixByteCount - 1 else { throw .invalidPayload }
            let flags = p[68]
            guard flags & ~PreKeyMessage.knownFlags == 0, p.count == PreKeyMessage.prefixByteCount(flags: flags) - 1 else {
                throw .invalidPayload
            }
            if flags & 0x04 != 0 {
                guard let id = RegistrationID(rawValue: p.readBigEndianUInt32(at: p.count - PreKeyMessage.registrationIDPartByteCount)) else {
                    throw .invalidPayload
                }
                registrationID = id
            } else {
                registrationID = nil
            }
            do {
                identityKey = try Ed25519.PublicKey(rawRepresentation: Array(p[0 ..< 32]))
                baseKey = try X25519.PublicKey(canonicalRepresentation: Array(p[32 ..< 64]))
            } catch {
                throw .invalidPayload
            }
            signedPreKeyID = p.readBigEndianUInt32(at: 64)
            var offset = PreKeyMessage.minimumPrefixByteCount - 1
            if flags & 0x01 != 0 {
                oneTimePreKeyID = p.readBigEndianUInt32(at: offset)
                offset += PreKeyMessage.oneTimePreKeyPartByteCount
            } else {
                oneTimePreKeyID = nil
            }
            kem = flags & 0x02 != 0
                ? KEMPart(uncheckedPreKeyID: p.readBigEndianUInt32(at: offset),
                          ciphertext: Array(p[offset + 4 ..< offset + PreKeyMessage.kemPartByteCount]))
                : nil
        }
    }

    /// Bytes of the prefix (with the type byte) without a one-time prekey or a KEM part.
    public static let minimumPrefixByteCount = 70
    /// Extra prefix bytes with a one-time prekey.
    public static let oneTimePreKeyPartByteCount = 4
    /// Extra prefix bytes with a KEM prekey.
    public static let kemPartByteCount = 4 + KEMEncapsulation.ciphertextByteCount
    /// Extra prefix bytes with a registration id.
    public static let registrationIDPartByteCount = 4
    /// The longest prefix (type byte included): every optional part present.
    public static let maximumPrefixByteCount = minimumPrefixByteCount + oneTimePreKeyPartByteCount + kemPartByteCount
        + registrationIDPartByteCount
    /// The flag bits a prefix may set: 0 (one-time prekey), 1 (KEM prekey), 2 (registration id).
    static let knownFlags: UInt8 = 0x07

    /// Bytes of the prefix (type byte included) for a flags byte with only bits 0–2.
    static func prefixByteCount(flags: UInt8) -> Int {
        minimumPrefixByteCount + (flags & 0x01 != 0 ? oneTimePreKeyPartByteCount : 0)
            + (flags & 0x02 != 0 ? kemPartByteCount : 0) + (flags & 0x04 != 0 ? registrationIDPartByteCount : 0)
    }

    /// The X3DH prefix.
    public let prefix: Prefix
    /// The Double Ratchet message that follows the prefix.
    public let message: RatchetMessage

    /// Decodes a prekey message.
    /// - Throws: `SessionError.invalidMessage` for a short input, a flags byte with a bit other
    ///   than 0–2 or a registration id of 0 or above 2^31 − 1, `SessionError.unsupportedVersion`
    ///   for a type byte other than 0x22 or an inner type byte other than 0x21,
    ///   `SessionError.invalidKey` for a non-canonical EK_A or ratchet key.
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        guard let type = bytes.first else { throw .invalidMessage }
        guard type == WireType.preKeyMessage else { throw .unsupportedVersion }
        guard bytes.count >= Self.minimumPrefixByteCount else { throw .invalidMessage }
        let flags = bytes[69]
        guard flags & ~Self.knownFlags == 0 else { throw .invalidMessage }
        let prefixCount = Self.prefixByteCount(flags: flags)
        guard bytes.count >= prefixCount + RatchetMessage.minimumByteCount else { throw .invalidMessage }
        // SPEC §9: the registration id is checked with the lengths and flags, before the inner type byte.
        var registrationID: RegistrationID?
        if flags & 0x04 != 0 {
            guard let id = RegistrationID(rawValue: bytes.readBigEndianUInt32(at: prefixCount - Self.registrationIDPartByteCount)) else {
                throw .invalidMessage
            }
            registrationID = id
        }
        guard bytes[prefixCount] == WireType.ratchetMessage else { throw .unsupportedVersion }
        let identityKey: Ed25519.PublicKey
        let baseKey: X25519.PublicKey
        do {
            identityKey = try Ed25519.PublicKey(rawRepresentation: Array(bytes[1 ..< 33]))
            baseKey = try X25519.PublicKey(canonicalRepresentation: Array(bytes[33 ..< 65]))
        } catch {
            throw .invalidKey
        }
        var offset = Self.minimumPrefixByteCount
        var oneTimePreKeyID: UInt32?
        if flags & 0x01 != 0 {
            oneTimePreKeyID = bytes.readBigEndianUInt32(at: offset)
            offset += Self.oneTimePreKeyPartByteCount
        }
        var kem: Prefix.KEMPart?
        if flags & 0x02 != 0 {
            kem = Prefix.KEMPart(
                uncheckedPreKeyID: bytes.readBigEndianUInt32(at: offset),
                ciphertext: Array(bytes[offset + 4 ..< offset + Self.kemPartByteCount]))
        }
        message = try RatchetMessage(buffer: bytes, start: prefixCount)
        prefix = Prefix(
            identityKey: identityKey, baseKey: baseKey, signedPreKeyID: bytes.readBigEndianUInt32(at: 65),
            oneTimePreKeyID: oneTimePreKeyID, kem: kem, registrationID: registrationID)
    }

    /// The whole prekey message: `0x22 || P || message`.
    public var serialized: [UInt8] {
        message.start == prefix.byteCount + 1 ? message.buffer : [WireType.preKeyMessage] + prefix.bytes + message.serialized
    }
}
