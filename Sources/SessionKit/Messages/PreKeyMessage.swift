import SignalPrimitives

/// A prekey message (SPEC §4): what an initiator sends until it has decrypted a reply.
///
///     0x02 || IK_A (32) || EK_A (32) || u32(spk_id) || flag || [u32(opk_id)] || message
///
/// `flag` is 0x00 without and 0x01 with a one-time prekey id; `message` is a `RatchetMessage`.
/// Decoding checks, in order: the type byte (`unsupportedVersion`), the lengths and the flag
/// (`invalidMessage`: at least 70 or 74 prefix bytes plus 41 + 16), the inner type byte
/// (`unsupportedVersion`), then the canonicity of EK_A and of the ratchet key (`invalidKey`).
/// IK_A's validity as an Ed25519 point is X3DH's check, not the decoder's.
public struct PreKeyMessage: Sendable, Hashable {
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

        /// Creates a prefix.
        public init(identityKey: Ed25519.PublicKey, baseKey: X25519.PublicKey, signedPreKeyID: UInt32, oneTimePreKeyID: UInt32?) {
            self.identityKey = identityKey
            self.baseKey = baseKey
            self.signedPreKeyID = signedPreKeyID
            self.oneTimePreKeyID = oneTimePreKeyID
        }

        /// Bytes of the prefix: 70 without, 74 with a one-time prekey id.
        public var byteCount: Int { oneTimePreKeyID == nil ? PreKeyMessage.prefixByteCount : PreKeyMessage.prefixByteCountWithOneTimePreKey }

        /// `0x02 || IK_A || EK_A || u32(spk_id) || flag || [u32(opk_id)]`.
        public var serialized: [UInt8] {
            var out = [UInt8]()
            out.reserveCapacity(byteCount)
            out.append(WireType.preKeyMessage)
            out.append(contentsOf: identityKey.rawRepresentation)
            out.append(contentsOf: baseKey.rawRepresentation)
            out.appendBigEndian(signedPreKeyID)
            if let oneTimePreKeyID {
                out.append(0x01)
                out.appendBigEndian(oneTimePreKeyID)
            } else {
                out.append(0x00)
            }
            return out
        }
    }

    /// Prefix bytes without a one-time prekey id.
    public static let prefixByteCount = 70
    /// Prefix bytes with a one-time prekey id.
    public static let prefixByteCountWithOneTimePreKey = 74

    /// The X3DH prefix.
    public let prefix: Prefix
    /// The Double Ratchet message that follows the prefix.
    public let message: RatchetMessage

    /// Decodes a prekey message.
    /// - Throws: `SessionError.invalidMessage` for a short input or a flag byte other than
    ///   0x00 or 0x01, `SessionError.unsupportedVersion` for a type byte other than 0x02 or an
    ///   inner type byte other than 0x01, `SessionError.invalidKey` for a non-canonical EK_A or
    ///   ratchet key.
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        guard let type = bytes.first else { throw .invalidMessage }
        guard type == WireType.preKeyMessage else { throw .unsupportedVersion }
        guard bytes.count >= Self.prefixByteCount else { throw .invalidMessage }
        let flag = bytes[69]
        guard flag <= 0x01 else { throw .invalidMessage }
        let prefixCount = flag == 0x01 ? Self.prefixByteCountWithOneTimePreKey : Self.prefixByteCount
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
        prefix = Prefix(
            identityKey: identityKey, baseKey: baseKey, signedPreKeyID: bytes.readBigEndianUInt32(at: 65),
            oneTimePreKeyID: flag == 0x01 ? bytes.readBigEndianUInt32(at: 70) : nil)
        message = try RatchetMessage(buffer: bytes, start: prefixCount)
    }

    /// The whole prekey message: prefix || message.
    public var serialized: [UInt8] { message.start == prefix.byteCount ? message.buffer : prefix.serialized + message.serialized }
}
