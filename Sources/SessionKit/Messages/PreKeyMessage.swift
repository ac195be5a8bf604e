import SignalPrimitives

/// A prekey message (SPEC §4): what an initiator sends until it has decrypted a reply.
///
///     0x22 || IK_A (32) || EK_A (32) || u32(spk_id) || flags (1)
///          || [u32(opk_id)]                       (flags bit 0: a one-time prekey was used)
///          || [u32(kem_id) || CT (1088)]          (flags bit 1: a KEM prekey was used)
///          || message
///
/// The bytes between the type byte and `message` are the prefix P that X3DH hashes into its
/// key derivation (SPEC §3). Decoding checks, in order: the type byte (`unsupportedVersion`),
/// the lengths and the flags (`invalidMessage`: 70 prefix bytes, plus 4 with a one-time
/// prekey, plus 1092 with a KEM prekey, then at least 41 + 16), the inner type byte
/// (`unsupportedVersion`), then the canonicity of EK_A and of the ratchet key (`invalidKey`).
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
            oneTimePreKeyID: UInt32?, kem: KEMPart?
        ) {
            self.identityKey = identityKey
            self.baseKey = baseKey
            self.signedPreKeyID = signedPreKeyID
            self.oneTimePreKeyID = oneTimePreKeyID
            self.kem = kem
        }

        /// The flags byte: bit 0 a one-time prekey, bit 1 a KEM prekey.
        public var flags: UInt8 { (oneTimePreKeyID == nil ? 0 : 0x01) | (kem == nil ? 0 : 0x02) }

        /// Bytes of P (the prefix without the type byte).
        public var byteCount: Int { PreKeyMessage.prefixByteCount(flags: flags) - 1 }

        /// P = `IK_A || EK_A || u32(spk_id) || flags || [u32(opk_id)] || [u32(kem_id) || CT]`,
        /// the bytes X3DH hashes into SK (SPEC §3).
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
            return out
        }

        /// SHA-256(P).
        public var digest: [UInt8] { SHA256.hash(bytes) }

        /// Decodes P as `bytes` writes it (persistence): exactly one prefix, flags bits 0–1 only,
        /// a canonical EK_A.
        /// - Throws: `SessionError.invalidPayload` for anything else.
        init(decoding p: [UInt8]) throws(SessionError) {
            guard p.count >= PreKeyMessage.minimumPrefixByteCount - 1 else { throw .invalidPayload }
            let flags = p[68]
            guard flags & ~0x03 == 0, p.count == PreKeyMessage.prefixByteCount(flags: flags) - 1 else { throw .invalidPayload }
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

    /// Bytes of the prefix (type byte included) for a flags byte with only bits 0 and 1.
    static func prefixByteCount(flags: UInt8) -> Int {
        minimumPrefixByteCount + (flags & 0x01 != 0 ? oneTimePreKeyPartByteCount : 0)
            + (flags & 0x02 != 0 ? kemPartByteCount : 0)
    }

    /// The X3DH prefix.
    public let prefix: Prefix
    /// The Double Ratchet message that follows the prefix.
    public let message: RatchetMessage

    /// Decodes a prekey message.
    /// - Throws: `SessionError.invalidMessage` for a short input or a flags byte with a bit other
    ///   than 0 and 1, `SessionError.unsupportedVersion` for a type byte other than 0x22 or an
    ///   inner type byte other than 0x21, `SessionError.invalidKey` for a non-canonical EK_A or
    ///   ratchet key.
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        guard let type = bytes.first else { throw .invalidMessage }
        guard type == WireType.preKeyMessage else { throw .unsupportedVersion }
        guard bytes.count >= Self.minimumPrefixByteCount else { throw .invalidMessage }
        let flags = bytes[69]
        guard flags & ~0x03 == 0 else { throw .invalidMessage }
        let prefixCount = Self.prefixByteCount(flags: flags)
        guard bytes.count >= prefixCount + RatchetMessage.minimumByteCount else { throw .invalidMessage }
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
            oneTimePreKeyID: oneTimePreKeyID, kem: kem)
    }

    /// The whole prekey message: `0x22 || P || message`.
    public var serialized: [UInt8] {
        message.start == prefix.byteCount + 1 ? message.buffer : [WireType.preKeyMessage] + prefix.bytes + message.serialized
    }
}
